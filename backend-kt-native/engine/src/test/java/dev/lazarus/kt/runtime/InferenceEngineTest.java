package dev.lazarus.kt.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.model.ForwardBatch;
import dev.lazarus.kt.model.KvCache;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.model.TinyModels;
import dev.lazarus.kt.parallel.Parallel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class InferenceEngineTest {

    @TempDir
    static Path dir;

    static GgufFile file;
    static Model model;
    static final Parallel PARALLEL = Parallel.ofThreads(2);

    @BeforeAll
    static void load() {
        file = GgufFile.open(TinyModels.qwen3moe(dir, 11));
        model = Model.load(file, PARALLEL);
    }

    @AfterAll
    static void close() {
        file.close();
        PARALLEL.close();
    }

    static InferenceEngine engine(int prefixEntries) {
        return new InferenceEngine(model, new EngineOptions(TinyModels.CONTEXT, 4, 8, 64, prefixEntries), PARALLEL);
    }

    /** Reference: the model driven directly, one token per forward pass. */
    static int[] greedyAlone(int[] prompt, int n) {
        KvCache cache = model.newCache(TinyModels.CONTEXT);
        float[] logits = null;
        int pos = 0;
        for (int t : prompt) {
            cache.ensureCapacity(pos + 1);
            logits = model.forward(ForwardBatch.single(t, pos++, cache))[0];
        }
        int[] out = new int[n];
        RecordingListener argmax = new RecordingListener(-1);
        for (int i = 0; i < n; i++) {
            out[i] = argmax.select(logits);
            cache.ensureCapacity(pos + 1);
            logits = model.forward(ForwardBatch.single(out[i], pos++, cache))[0];
        }
        return out;
    }

    @Test
    void concurrentSequencesGenerateWhatEachWouldAlone() throws Exception {
        int[][] prompts = {{1, 2, 3, 4, 5}, {9, 8}, {30, 31, 32}, {50, 1, 50, 1, 50, 1, 50}, {12}};
        try (InferenceEngine engine = engine(0)) {
            List<RecordingListener> listeners = new ArrayList<>();
            for (int[] p : prompts) {
                RecordingListener l = new RecordingListener(10);
                engine.submit(p, l);
                listeners.add(l);
            }
            for (int s = 0; s < prompts.length; s++) {
                assertThat(listeners.get(s).awaitEnd()).isEqualTo(EndReason.STOPPED);
                assertThat(listeners.get(s).tokenArray()).as("sequence %d", s)
                        .containsExactly(greedyAlone(prompts[s], 10));
            }
            // Five 10-token sequences with at most four at a time: far fewer passes than tokens.
            assertThat(engine.steps()).isLessThan(5 * 11);
        }
    }

    /** A prompt fed in steps of at most 16 tokens tells each step before the last, which picks the first token. */
    @Test
    void aPromptReadInStepsTellsItsProgressBeforeTheFirstToken() throws Exception {
        int[] prompt = new int[40];
        for (int i = 0; i < prompt.length; i++) {
            prompt[i] = 4 + i % 30;
        }
        try (InferenceEngine engine = new InferenceEngine(model, new EngineOptions(TinyModels.CONTEXT, 4, 8, 16, 0),
                PARALLEL)) {
            RecordingListener listener = new RecordingListener(3);
            engine.submit(prompt, listener);
            listener.awaitEnd();
            assertThat(listener.prefilled).containsExactly(List.of(16, 40), List.of(32, 40));
            assertThat(listener.tokenArray()).containsExactly(greedyAlone(prompt, 3));
        }
    }

    @Test
    void promptPrefixIsReusedAndGivesTheSameTokensAsAColdStart() throws Exception {
        int[] first = {4, 5, 6, 7, 8, 9, 10, 11};
        int[] second = {4, 5, 6, 7, 8, 9, 20, 21};
        try (InferenceEngine engine = engine(4)) {
            RecordingListener warm = new RecordingListener(4);
            engine.submit(first, warm);
            warm.awaitEnd();
            RecordingListener reuse = new RecordingListener(6);
            SequenceHandle handle = engine.submit(second, reuse);
            reuse.awaitEnd();
            assertThat(handle.reusedPromptTokens()).isEqualTo(6);
            assertThat(reuse.tokenArray()).containsExactly(greedyAlone(second, 6));
        }
    }

    @Test
    void promptThatFillsTheContextIsRefused() {
        try (InferenceEngine engine = engine(0)) {
            assertThatThrownBy(() -> engine.submit(new int[TinyModels.CONTEXT], new RecordingListener(1)))
                    .isInstanceOfSatisfying(BackendException.class,
                            e -> assertThat(e.kind()).isEqualTo(BackendErrorKind.CONTEXT_LENGTH_EXCEEDED));
        }
    }

    @Test
    void generationStopsWhenTheContextIsFull() throws Exception {
        int[] prompt = new int[TinyModels.CONTEXT - 5];
        try (InferenceEngine engine = engine(0)) {
            RecordingListener l = new RecordingListener(-1);
            engine.submit(prompt, l);
            assertThat(l.awaitEnd()).isEqualTo(EndReason.CONTEXT_FULL);
            // prompt + generated tokens fill the context exactly, as llama-server's (ContextLimitLlamaServerTest)
            assertThat(l.tokens).hasSize(5);
        }
    }

    @Test
    void cancellingFreesTheSequence() throws Exception {
        try (InferenceEngine engine = engine(0)) {
            // The engine thread waits inside the third token's callback until the cancel is in: on a fast
            // machine an unheld engine fills the tiny context before a polling test can cancel.
            RecordingListener endless = new RecordingListener(-1, 3);
            SequenceHandle handle = engine.submit(new int[] {1, 2, 3}, endless);
            assertThat(endless.held.await(60, TimeUnit.SECONDS)).as("three tokens within a minute").isTrue();
            handle.cancel();
            endless.release.countDown();
            assertThat(endless.awaitEnd()).isEqualTo(EndReason.CANCELLED);
            assertThat(endless.tokens).as("no token after the cancel").hasSize(3);
            assertThat(handle.isDone()).isTrue();
            assertThat(engine.load()).isZero();
            RecordingListener next = new RecordingListener(2);
            engine.submit(new int[] {7}, next);
            assertThat(next.awaitEnd()).isEqualTo(EndReason.STOPPED);
        }
    }
}
