package dev.lazarus.kt.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.parallel.Parallel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ModelForwardTest {

    @TempDir
    static Path dir;

    static final Parallel PARALLEL = Parallel.ofThreads(2);
    static final List<GgufFile> OPEN = new ArrayList<>();

    @BeforeAll
    static void writeModels() {
        TinyModels.llama(dir, 1);
        TinyModels.qwen3moe(dir, 2);
        TinyModels.deepseek2(dir, 3, true);
        TinyModels.deepseek2(dir, 3, false);
    }

    @AfterAll
    static void close() {
        OPEN.forEach(GgufFile::close);
        PARALLEL.close();
    }

    static Model load(String name) {
        GgufFile file = GgufFile.open(dir.resolve(name));
        OPEN.add(file);
        return Model.load(file, PARALLEL);
    }

    static Stream<String> models() {
        return Stream.of("llama-1.gguf", "qwen3moe-2.gguf", "deepseek2-3-mla.gguf", "deepseek2-3-kvb.gguf");
    }

    @ParameterizedTest
    @MethodSource("models")
    void chunkedPrefillMatchesTokenByToken(String name) {
        chunkedPrefillMatchesTokenByToken(name, KvCacheTypes.F16);
    }

    /** The same with BF16 keys and values: the typed paths of both attention orders (their head widths, 16, bar blocks). */
    @ParameterizedTest
    @MethodSource("models")
    void chunkedPrefillMatchesTokenByTokenWithABf16Cache(String name) {
        chunkedPrefillMatchesTokenByToken(name, new KvCacheTypes(KvCacheType.BF16, KvCacheType.BF16));
    }

    @org.junit.jupiter.api.Test
    void cacheTypesTheModelCannotHoldAreRefusedWithLlamaCppsReason() {
        Model llama = load("llama-1.gguf");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> llama.newCache(8, new KvCacheTypes(KvCacheType.Q8_0,
                KvCacheType.F16))).hasMessageContaining("block size 32 does not divide the key head width 16");
        Model mla = load("deepseek2-3-mla.gguf");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> mla.checkCacheTypes(new KvCacheTypes(KvCacheType.BF16,
                KvCacheType.F16), true)).hasMessageContaining("different K (bf16) and V (f16)");
    }

    private void chunkedPrefillMatchesTokenByToken(String name, KvCacheTypes types) {
        Model model = load(name);
        int[] prompt = {3, 17, 42, 5, 9, 60, 1};
        KvCache one = model.newCache(TinyModels.CONTEXT, types);
        float[] stepwise = null;
        for (int p = 0; p < prompt.length; p++) {
            one.ensureCapacity(p + 1);
            stepwise = model.forward(ForwardBatch.single(prompt[p], p, one))[0];
        }
        KvCache chunk = model.newCache(TinyModels.CONTEXT, types);
        chunk.ensureCapacity(prompt.length);
        KvCache[] caches = new KvCache[prompt.length];
        int[] positions = new int[prompt.length];
        boolean[] want = new boolean[prompt.length];
        for (int p = 0; p < prompt.length; p++) {
            caches[p] = chunk;
            positions[p] = p;
        }
        want[prompt.length - 1] = true;
        float[][] logits = model.forward(new ForwardBatch(prompt, positions, caches, want));
        assertThat(logits[0]).isNull();
        assertClose(logits[prompt.length - 1], stepwise, 1e-4f);
    }

    @ParameterizedTest
    @MethodSource("models")
    void batchedDecodeMatchesSingleSequenceDecode(String name) {
        Model model = load(name);
        int[][] prompts = {{1, 2, 3}, {40, 41}, {7, 7, 7, 7, 9}};
        List<int[]> alone = new ArrayList<>();
        for (int[] prompt : prompts) {
            alone.add(greedyAlone(model, prompt, 8));
        }
        // All three sequences decoded in one batch per step.
        KvCache[] caches = new KvCache[prompts.length];
        int[] last = new int[prompts.length];
        int[] length = new int[prompts.length];
        int[][] generated = new int[prompts.length][8];
        for (int s = 0; s < prompts.length; s++) {
            caches[s] = model.newCache(TinyModels.CONTEXT);
            for (int p = 0; p < prompts[s].length - 1; p++) {
                caches[s].ensureCapacity(p + 1);
                model.forward(ForwardBatch.single(prompts[s][p], p, caches[s]));
            }
            last[s] = prompts[s][prompts[s].length - 1];
            length[s] = prompts[s].length - 1;
        }
        for (int step = 0; step < 8; step++) {
            boolean[] want = new boolean[prompts.length];
            int[] positions = new int[prompts.length];
            for (int s = 0; s < prompts.length; s++) {
                want[s] = true;
                positions[s] = length[s];
                caches[s].ensureCapacity(length[s] + 1);
            }
            float[][] logits = model.forward(new ForwardBatch(last.clone(), positions, caches, want));
            for (int s = 0; s < prompts.length; s++) {
                generated[s][step] = argmax(logits[s]);
                last[s] = generated[s][step];
                length[s]++;
            }
        }
        for (int s = 0; s < prompts.length; s++) {
            assertThat(generated[s]).as("sequence %d", s).containsExactly(alone.get(s));
        }
    }

    @Test
    void absorbedLatentAttentionMatchesDecompressed() {
        int[] prompt = {5, 6, 7, 8, 9, 10};
        float[] absorbed = lastLogits(load("deepseek2-3-mla.gguf"), prompt);
        float[] decompressed = lastLogits(load("deepseek2-3-kvb.gguf"), prompt);
        // Same function; only the F16 rounding of what is cached differs.
        assertClose(absorbed, decompressed, 0.05f);
        assertThat(argmax(absorbed)).isEqualTo(argmax(decompressed));
    }

    @Test
    void moeModelRecordsOneExpertComputationPerStepAndBatch() {
        Model model = load("qwen3moe-2.gguf");
        KvCache[] caches = {model.newCache(8), model.newCache(8), model.newCache(8), model.newCache(8)};
        for (KvCache c : caches) {
            c.ensureCapacity(1);
        }
        // block 1 is the last one, whose FFN runs only for tokens that want logits (as llama.cpp's does)
        boolean[] wantLogits = {true, true, true, true};
        model.forward(new ForwardBatch(new int[] {1, 2, 3, 4}, new int[4], caches, wantLogits));
        long tokens = 0;
        long computations = 0;
        RoutingStats routing = model.routingStats();
        assertThat(routing.layers()).as("every block of this model has routed experts").isEqualTo(2);
        for (int e = 0; e < 8; e++) {
            tokens += routing.count(1, e);
            computations += routing.computations(1, e);
            assertThat(routing.computations(1, e)).isLessThanOrEqualTo(1);
        }
        assertThat(tokens).isEqualTo(4 * 2);
        assertThat(computations).isBetween(2L, 8L);
    }

    @Test
    void cacheRefusesPositionsPastTheContext() {
        Model model = load("llama-1.gguf");
        KvCache cache = model.newCache(4);
        cache.ensureCapacity(4);
        assertThatThrownBy(() -> cache.ensureCapacity(5))
                .isInstanceOf(KvCacheFullException.class)
                .hasMessageContaining("5 positions")
                .hasMessageContaining("4");
    }

    @Test
    void configReadsArchitectureShapes() {
        Model model = load("deepseek2-3-mla.gguf");
        ModelConfig c = model.config();
        assertThat(c.architecture()).isEqualTo(Architecture.DEEPSEEK2);
        assertThat(c.mla()).isEqualTo(new MlaConfig(32, 32, 16, 16, 16));
        assertThat(c.moe().gating()).isEqualTo(MoeConfig.Gating.SIGMOID);
        assertThat(c.moe().leadingDenseBlocks()).isEqualTo(1);
        assertThat(c.moe().groupCount()).isEqualTo(4);
        assertThat(c.moe().normalizeWeights()).isTrue();
        assertThat(c.moe().sharedFfnLength()).isEqualTo(16);
        assertThat(c.rope().style()).isEqualTo(RopeStyle.NORMAL);
        assertThat(c.rope().extFactor()).isEqualTo(1f);
        assertThat(model.kvLayout().keyWidths()).containsExactly(48, 48);
        assertThat(model.kvLayout().valueWidths()).containsExactly(0, 0);
        assertThat(load("qwen3moe-2.gguf").config().rope().style()).isEqualTo(RopeStyle.NEOX);
    }

    static float[] lastLogits(Model model, int[] prompt) {
        KvCache cache = model.newCache(TinyModels.CONTEXT);
        float[] logits = null;
        for (int p = 0; p < prompt.length; p++) {
            cache.ensureCapacity(p + 1);
            logits = model.forward(ForwardBatch.single(prompt[p], p, cache))[0];
        }
        return logits;
    }

    static int[] greedyAlone(Model model, int[] prompt, int n) {
        KvCache cache = model.newCache(TinyModels.CONTEXT);
        float[] logits = null;
        int pos = 0;
        for (int t : prompt) {
            cache.ensureCapacity(pos + 1);
            logits = model.forward(ForwardBatch.single(t, pos++, cache))[0];
        }
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            out[i] = argmax(logits);
            cache.ensureCapacity(pos + 1);
            logits = model.forward(ForwardBatch.single(out[i], pos++, cache))[0];
        }
        return out;
    }

    static int argmax(float[] v) {
        int best = 0;
        for (int i = 1; i < v.length; i++) {
            if (v[i] > v[best]) {
                best = i;
            }
        }
        return best;
    }

    static void assertClose(float[] actual, float[] expected, float tolerance) {
        assertThat(actual).hasSameSizeAs(expected);
        for (int i = 0; i < actual.length; i++) {
            assertThat(actual[i]).as("logit %d", i).isCloseTo(expected[i], within(tolerance));
        }
    }
}
