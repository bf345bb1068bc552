package dev.lazarus.kt.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.model.KvCache;
import dev.lazarus.kt.model.KvCacheType;
import dev.lazarus.kt.model.KvCacheTypes;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.synthetic.SyntheticModels;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hybrid model's sequences (qwen35moe: gated DeltaNet state per sequence beside the attention blocks' cache)
 * through the scheduler: several sequences batch into one pass without touching each other's state; a finished
 * sequence's state is a checkpoint that a prompt extending all of its tokens continues from (a chat's next turn, a
 * resumed stream), token for token as a cold start; a prompt that shares only part of it starts cold, since a
 * recurrent state cannot be cut back. The model is F32, whose products round the same in any batch, so warm and cold
 * runs must agree exactly.
 */
class RecurrentSequencesTest {

    @TempDir
    static Path dir;

    static final Parallel PARALLEL = Parallel.ofThreads(2);
    static GgufFile gguf;
    static Model model;

    @BeforeAll
    static void load() {
        gguf = GgufFile.open(SyntheticModels.write(SyntheticModels.tinyQwen35Moe(), dir.resolve("qwen35moe.gguf")));
        model = Model.load(gguf, PARALLEL);
    }

    @AfterAll
    static void close() {
        gguf.close();
        PARALLEL.close();
    }

    private static InferenceEngine engine(int prefixEntries) {
        return new InferenceEngine(model, new EngineOptions(256, 4, 8, 64, prefixEntries), PARALLEL);
    }

    /** Greedy tokens of {@code prompt} on an engine of its own, nothing reused. */
    private static int[] cold(int[] prompt, int n) throws Exception {
        try (InferenceEngine engine = engine(0)) {
            RecordingListener l = new RecordingListener(n);
            engine.submit(prompt, l);
            assertThat(l.awaitEnd()).isEqualTo(EndReason.STOPPED);
            return l.tokenArray();
        }
    }

    private static int[] concat(int[] a, int[] b) {
        int[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    @Test
    void concurrentSequencesGenerateWhatEachWouldAlone() throws Exception {
        int[][] prompts = {{1, 2, 3, 4, 5, 6, 7}, {9, 8}, {30, 31, 32}, {50, 1, 50, 1, 50, 1, 50}, {12}};
        try (InferenceEngine engine = engine(0)) {
            List<RecordingListener> listeners = new ArrayList<>();
            for (int[] p : prompts) {
                RecordingListener l = new RecordingListener(8);
                engine.submit(p, l);
                listeners.add(l);
            }
            for (int s = 0; s < prompts.length; s++) {
                assertThat(listeners.get(s).awaitEnd()).isEqualTo(EndReason.STOPPED);
                assertThat(listeners.get(s).tokenArray()).as("sequence %d", s).containsExactly(cold(prompts[s], 8));
            }
            assertThat(engine.steps()).as("passes for five 8-token sequences, four at a time").isLessThan(5 * 9);
        }
    }

    @Test
    void aResumedStreamContinuesFromTheCheckpointTokenForToken() throws Exception {
        int[] prompt = {4, 5, 6, 7, 8, 9, 10, 11};
        int[] whole = cold(prompt, 16);
        try (InferenceEngine engine = engine(4)) {
            RecordingListener first = new RecordingListener(8);
            engine.submit(prompt, first);
            first.awaitEnd();
            assertThat(first.tokenArray()).containsExactly(Arrays.copyOf(whole, 8));
            // the stream's text so far comes back as the prompt: the checkpoint holds the prompt and 7 fed tokens
            RecordingListener rest = new RecordingListener(8);
            SequenceHandle handle = engine.submit(concat(prompt, first.tokenArray()), rest);
            rest.awaitEnd();
            assertThat(handle.reusedPromptTokens()).isEqualTo(prompt.length + 7);
            assertThat(rest.tokenArray()).containsExactly(Arrays.copyOfRange(whole, 8, 16));
        }
    }

    @Test
    void aPromptSharingOnlyPartOfAFinishedSequenceStartsCold() throws Exception {
        int[] first = {4, 5, 6, 7, 8, 9, 10, 11};
        int[] second = {4, 5, 6, 7, 8, 9, 20, 21};
        try (InferenceEngine engine = engine(4)) {
            RecordingListener warm = new RecordingListener(4);
            engine.submit(first, warm);
            warm.awaitEnd();
            RecordingListener other = new RecordingListener(6);
            SequenceHandle handle = engine.submit(second, other);
            other.awaitEnd();
            assertThat(handle.reusedPromptTokens()).isZero();
            assertThat(other.tokenArray()).containsExactly(cold(second, 6));
        }
    }

    @Test
    void quantizedCacheTypesAreRefusedAtLoadAndTheStateStaysF32() {
        // the recurrent state is f32 whatever the cache types; only f16 attention rows are held to llama-server here
        assertThatThrownBy(() -> model.checkCacheTypes(new KvCacheTypes(KvCacheType.Q8_0, KvCacheType.Q8_0), true))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("qwen35moe keeps an f16 KV cache")
                .hasMessageContaining("q8_0/q8_0");
        KvCache cache = model.newCache(64, KvCacheTypes.F16);
        assertThat(cache.hasRecurrentState()).isTrue();
        assertThat(cache.bytes()).isGreaterThan(4L * cache.recurrent(0).length);
    }
}
