package dev.lazarus.kt.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.model.ForwardBatch;
import dev.lazarus.kt.model.KvCache;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.synthetic.SyntheticModels;
import dev.lazarus.kt.synthetic.SyntheticModels.Indexer;
import dev.lazarus.kt.synthetic.SyntheticModels.Spec;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * deepseek32's sparse attention in the engine: the indexer's selection takes effect at the lengths the parity suites
 * use (so their bit-for-bit agreement with llama-server covers it), and its cache of indexer keys, kept in the block's
 * cache rows, stays consistent when a prompt prefix is reused and when a stream resumes from its text (the indexer
 * keys then come from one batched prompt pass instead of one decode step each).
 */
class SparseAttentionTest {

    @TempDir
    static Path dir;

    static final Parallel PARALLEL = Parallel.ofThreads(2);
    static final int CONTEXT = 256;
    static GgufFile file;
    static Model model;

    @BeforeAll
    static void load() {
        file = GgufFile.open(SyntheticModels.write(SyntheticModels.tinyDeepseek32(), dir.resolve("ds32.gguf")));
        model = Model.load(file, PARALLEL);
    }

    @AfterAll
    static void close() {
        file.close();
        PARALLEL.close();
    }

    static int[] prompt(int length, int first) {
        int[] p = new int[length];
        for (int i = 0; i < length; i++) {
            p[i] = first + 7 * i % 200;
        }
        return p;
    }

    /** Every position's logits of one batched pass over {@code tokens}. */
    static float[][] logits(Model m, int[] tokens) {
        KvCache cache = m.newCache(CONTEXT);
        cache.ensureCapacity(tokens.length);
        int[] positions = new int[tokens.length];
        KvCache[] caches = new KvCache[tokens.length];
        boolean[] want = new boolean[tokens.length];
        for (int i = 0; i < tokens.length; i++) {
            positions[i] = i;
            caches[i] = cache;
            want[i] = true;
        }
        return m.forward(new ForwardBatch(tokens, positions, caches, want));
    }

    @Test
    void queriesPastTheIndexersTopKAttendOnlyTheSelectedPositions() {
        Spec spec = SyntheticModels.tinyDeepseek32();
        int topK = spec.mla().indexer().topK();
        Spec dense = spec.withMla(spec.mla().withIndexer(new Indexer(spec.mla().indexer().heads(),
                spec.mla().indexer().headDim(), 4096))).withName("dense-deepseek32");
        int[] tokens = prompt(40, 3);
        float[][] sparse = logits(model, tokens);
        try (GgufFile denseFile = GgufFile.open(SyntheticModels.write(dense, dir.resolve("dense.gguf")))) {
            float[][] all = logits(Model.load(denseFile, PARALLEL), tokens);
            int first = 0;
            while (first < tokens.length && Arrays.equals(sparse[first], all[first])) {
                first++;
            }
            // the same model but for the top-k: equal while a query has no more positions than top-k, then not
            assertThat(first).isEqualTo(topK);
        }
    }

    /** The model driven one token per forward pass. */
    static int[] greedyAlone(int[] prompt, int n) {
        KvCache cache = model.newCache(CONTEXT);
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

    static InferenceEngine engine(int prefixEntries) {
        return new InferenceEngine(model, new EngineOptions(CONTEXT, 4, 8, 64, prefixEntries), PARALLEL);
    }

    @Test
    void aReusedPromptPrefixGivesTheTokensOfAColdStart() throws Exception {
        int[] first = prompt(30, 5);
        int[] second = Arrays.copyOf(first, 34);
        for (int i = 24; i < second.length; i++) {
            second[i] = 90 + i;
        }
        try (InferenceEngine engine = engine(4)) {
            RecordingListener warm = new RecordingListener(4);
            engine.submit(first, warm);
            warm.awaitEnd();
            RecordingListener reuse = new RecordingListener(16);
            SequenceHandle handle = engine.submit(second, reuse);
            reuse.awaitEnd();
            assertThat(handle.reusedPromptTokens()).isEqualTo(24);
            assertThat(reuse.tokenArray()).containsExactly(greedyAlone(second, 16));
        }
    }

    @Test
    void aStreamResumedFromItsTextContinuesTokenForToken() throws Exception {
        int[] prompt = prompt(20, 11);
        int[] whole = greedyAlone(prompt, 24);
        int[] resumed = Arrays.copyOf(prompt, prompt.length + 10);
        System.arraycopy(whole, 0, resumed, prompt.length, 10);
        try (InferenceEngine engine = engine(0)) {
            RecordingListener rest = new RecordingListener(14);
            engine.submit(resumed, rest);
            assertThat(rest.awaitEnd()).isEqualTo(EndReason.STOPPED);
            assertThat(rest.tokenArray()).containsExactly(Arrays.copyOfRange(whole, 10, 24));
        }
    }
}
