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
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * deepseek32's sparse attention in the engine (and glm-dsa's with GLM-5.2's shared indexers, whose sharing blocks
 * attend what the block before chose): the indexer's selection takes effect at the lengths the parity suites
 * use (so their bit-for-bit agreement with llama-server covers it), and its cache of indexer keys, kept in the block's
 * cache rows, stays consistent when a prompt prefix is reused and when a stream resumes from its text (the indexer
 * keys then come from one batched prompt pass instead of one decode step each).
 */
class SparseAttentionTest {

    @TempDir
    static Path dir;

    static final Parallel PARALLEL = Parallel.ofThreads(2);
    static final int CONTEXT = 256;
    static final Map<String, GgufFile> files = new HashMap<>();
    static final Map<String, Model> models = new HashMap<>();

    static Stream<Named<Spec>> specs() {
        return Stream.of(SyntheticModels.tinyDeepseek32(), SyntheticModels.tinyGlmDsaSharedIndexers())
                .map(spec -> Named.of(spec.name(), spec));
    }

    static synchronized Model model(Spec spec) {
        return models.computeIfAbsent(spec.name(), name -> {
            GgufFile file = GgufFile.open(SyntheticModels.write(spec, dir.resolve(name + ".gguf")));
            files.put(name, file);
            return Model.load(file, PARALLEL);
        });
    }

    @AfterAll
    static void close() {
        files.values().forEach(GgufFile::close);
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

    @ParameterizedTest(name = "{0}")
    @MethodSource("specs")
    void queriesPastTheIndexersTopKAttendOnlyTheSelectedPositions(Spec spec) {
        Indexer indexer = spec.mla().indexer();
        int topK = indexer.topK();
        Spec dense = spec.withMla(spec.mla().withIndexer(new Indexer(indexer.heads(), indexer.headDim(), 4096,
                indexer.fullEvery()))).withName("dense-" + spec.name());
        int[] tokens = prompt(40, 3);
        float[][] sparse = logits(model(spec), tokens);
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
    static int[] greedyAlone(Model model, int[] prompt, int n) {
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

    static InferenceEngine engine(Model model, int prefixEntries) {
        return new InferenceEngine(model, new EngineOptions(CONTEXT, 4, 8, 64, prefixEntries), PARALLEL);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("specs")
    void aReusedPromptPrefixGivesTheTokensOfAColdStart(Spec spec) throws Exception {
        Model model = model(spec);
        int[] first = prompt(30, 5);
        int[] second = Arrays.copyOf(first, 34);
        for (int i = 24; i < second.length; i++) {
            second[i] = 90 + i;
        }
        try (InferenceEngine engine = engine(model, 4)) {
            RecordingListener warm = new RecordingListener(4);
            engine.submit(first, warm);
            warm.awaitEnd();
            RecordingListener reuse = new RecordingListener(16);
            SequenceHandle handle = engine.submit(second, reuse);
            reuse.awaitEnd();
            assertThat(handle.reusedPromptTokens()).isEqualTo(24);
            assertThat(reuse.tokenArray()).containsExactly(greedyAlone(model, second, 16));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("specs")
    void aStreamResumedFromItsTextContinuesTokenForToken(Spec spec) throws Exception {
        Model model = model(spec);
        int[] prompt = prompt(20, 11);
        int[] whole = greedyAlone(model, prompt, 24);
        int[] resumed = Arrays.copyOf(prompt, prompt.length + 10);
        System.arraycopy(whole, 0, resumed, prompt.length, 10);
        try (InferenceEngine engine = engine(model, 0)) {
            RecordingListener rest = new RecordingListener(14);
            engine.submit(resumed, rest);
            assertThat(rest.awaitEnd()).isEqualTo(EndReason.STOPPED);
            assertThat(rest.tokenArray()).containsExactly(Arrays.copyOfRange(whole, 10, 24));
        }
    }
}
