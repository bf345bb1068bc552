package dev.lazarus.kt.synthetic;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufWriter;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Random-weight GGUF models that llama.cpp loads, for tests (engine against llama-server, token for token)
 * and benchmarks. Everything is deterministic from the {@link Spec}, seed included: the same spec writes
 * the same bytes. Weights are uniform with a variance that keeps activations near unit scale through the
 * layers (matrices 1/fan-in, norms around 1, a sharper output head and router so greedy choices and expert
 * choices are not near-ties); they are NOT a trained model and say so in {@code general.description}.
 *
 * <p>Architectures: {@code llama} (dense, or Mixtral-style experts), {@code qwen3} / {@code qwen3moe}
 * (QK-norm, softmax router) and {@code deepseek2} (MLA with fused {@code attn_kv_b} or split
 * {@code attn_k_b}/{@code attn_v_b}, leading dense layers, shared expert, sigmoid group-limited routing with
 * {@code exp_probs_b}, YaRN), {@code glm4moe} (deepseek2's routing on grouped-query attention with biases and
 * partial rope), {@code deepseek32} / {@code glm-dsa} (MLA with the lightning indexer's sparse attention),
 * {@code gpt-oss} (sinks, sliding window, biases, biased experts), {@code qwen35moe} and {@code qwen3next} (gated DeltaNet)
 * and {@code minimax-m2} (QK-norm across heads, sigmoid routing without a shared expert).
 */
public final class SyntheticModels {

    private SyntheticModels() {
    }

    /** llama.cpp's {@code llama_expert_gating_func_type} values. */
    public enum Gating {
        SOFTMAX(1), SIGMOID(2);

        private final int id;

        Gating(int id) {
            this.id = id;
        }

        public int id() {
            return id;
        }
    }

    /**
     * Routed experts. {@code leadingDense} first layers use a dense FFN instead (deepseek2 only);
     * {@code shared} experts of width {@code expertFfn} run for every token beside the routed ones (deepseek2);
     * {@code groups}/{@code groupsUsed} limit the choice to the best groups first (deepseek2, 0 = off).
     * {@code routingSkew} 0 gives every expert a router row of the same scale, hence a flat routing (each
     * expert about equally often); above 0 the rows are scaled by {@code rank^-routingSkew} (rank 1..experts,
     * the ranks shuffled per layer), so a few experts per layer are chosen far more often than the rest, as in
     * trained MoE models. See {@link RouterSkew}.
     */
    public record Moe(int experts, int used, int expertFfn, int shared, int leadingDense, Gating gating,
                      boolean normalizeWeights, float weightsScale, int groups, int groupsUsed, boolean probsBias,
                      float routingSkew) {
        public Moe {
            require(experts > 1 && used >= 1 && used <= experts, "experts %d, used %d", experts, used);
            require(routingSkew >= 0 && routingSkew <= 4, "routing skew %s", routingSkew);
            require(groups == 0 || (experts % groups == 0 && groupsUsed >= 1 && groupsUsed <= groups
                    && used <= groupsUsed * (experts / groups)), "expert groups %d/%d for %d experts, %d used",
                    groupsUsed, groups, experts, used);
        }

        /** Flat routing (random router rows of one scale). */
        public Moe(int experts, int used, int expertFfn, int shared, int leadingDense, Gating gating,
                   boolean normalizeWeights, float weightsScale, int groups, int groupsUsed, boolean probsBias) {
            this(experts, used, expertFfn, shared, leadingDense, gating, normalizeWeights, weightsScale, groups,
                    groupsUsed, probsBias, 0f);
        }

        public Moe withRoutingSkew(float skew) {
            return new Moe(experts, used, expertFfn, shared, leadingDense, gating, normalizeWeights, weightsScale,
                    groups, groupsUsed, probsBias, skew);
        }

        /** Mixtral / Qwen3-MoE routing: softmax over all experts, top-k, weights renormalised. */
        public static Moe softmax(int experts, int used, int expertFfn) {
            return new Moe(experts, used, expertFfn, 0, 0, Gating.SOFTMAX, true, 1f, 0, 0, false);
        }
    }

    /**
     * Multi-head latent attention (deepseek2). {@code qLoraRank} 0 = one plain {@code attn_q}; {@code splitKvB}
     * writes {@code attn_k_b}/{@code attn_v_b} with the {@code *_mla} head sizes as current converters do,
     * otherwise the fused {@code attn_kv_b} of older GGUFs.
     */
    public record Mla(int qLoraRank, int kvLoraRank, int qkNopeDim, int qkRopeDim, int vHeadDim, boolean splitKvB,
                      Indexer indexer) {
        public Mla {
            require(qLoraRank >= 0 && kvLoraRank > 0 && qkNopeDim > 0 && qkRopeDim > 0 && qkRopeDim % 2 == 0 && vHeadDim > 0,
                    "MLA sizes q_lora %d kv_lora %d nope %d rope %d v %d", qLoraRank, kvLoraRank, qkNopeDim, qkRopeDim, vHeadDim);
            require(indexer == null || (splitKvB && qLoraRank > 0 && indexer.headDim() > qkRopeDim),
                    "an indexer needs split attn_k_b/attn_v_b, a query LoRA and heads wider than the rope part");
        }

        /** Without an indexer (deepseek2). */
        public Mla(int qLoraRank, int kvLoraRank, int qkNopeDim, int qkRopeDim, int vHeadDim, boolean splitKvB) {
            this(qLoraRank, kvLoraRank, qkNopeDim, qkRopeDim, vHeadDim, splitKvB, null);
        }

        public Mla withSplitKvB(boolean split) {
            return new Mla(qLoraRank, kvLoraRank, qkNopeDim, qkRopeDim, vHeadDim, split, indexer);
        }

        public Mla withIndexer(Indexer newIndexer) {
            return new Mla(qLoraRank, kvLoraRank, qkNopeDim, qkRopeDim, vHeadDim, splitKvB, newIndexer);
        }
    }

    /**
     * deepseek32's lightning indexer: {@code heads} query heads of {@code headDim} (a power of two from 64, for the
     * Hadamard transform), each query attending the {@code topK} best-scored positions. DeepSeek-V3.2 has 64 heads of
     * 128 and top-k 2048; test models take a top-k below their prompts' lengths so the selection is exercised.
     */
    public record Indexer(int heads, int headDim, int topK, int fullEvery) {
        public Indexer {
            require(heads > 0 && topK > 0 && headDim >= 64 && Integer.bitCount(headDim) == 1 && fullEvery >= 0,
                    "indexer heads %d of %d, top-k %d, full every %d", heads, headDim, topK, fullEvery);
        }

        /** Every block scoring with its own indexer. */
        public Indexer(int heads, int headDim, int topK) {
            this(heads, headDim, topK, 0);
        }

        /**
         * GLM-5.2's sharing ({@code attention.indexer.types}): only every {@code fullEvery}-th block from the first runs
         * its indexer, the blocks between reuse its selection; 0: every block its own (no key written).
         */
        public Indexer sharedBy(int every) {
            return new Indexer(heads, headDim, topK, every);
        }
    }

    /**
     * The gated DeltaNet blocks of qwen35moe and qwen3next: {@code keyHeads} query/key heads and {@code valueHeads}
     * value heads of {@code stateSize}, a convolution of {@code convKernel} taps; every {@code fullAttentionInterval}-th
     * block (1-based) is full attention; {@code fusedInput}: qwen3next's older layout, one {@code ssm_in} for queries,
     * keys, values and z instead of {@code attn_qkv} and {@code attn_gate}.
     */
    public record DeltaNet(int keyHeads, int valueHeads, int stateSize, int convKernel, int fullAttentionInterval,
                           boolean fusedInput) {
        public DeltaNet {
            require(keyHeads > 0 && valueHeads % keyHeads == 0 && stateSize > 0 && convKernel > 1
                    && fullAttentionInterval > 0, "DeltaNet heads %d/%d of %d, kernel %d, interval %d", keyHeads,
                    valueHeads, stateSize, convKernel, fullAttentionInterval);
        }

        public DeltaNet(int keyHeads, int valueHeads, int stateSize, int convKernel, int fullAttentionInterval) {
            this(keyHeads, valueHeads, stateSize, convKernel, fullAttentionInterval, false);
        }

        /** As older converters wrote qwen3next: the fused {@code ssm_in}. */
        public DeltaNet withFusedInput() {
            return new DeltaNet(keyHeads, valueHeads, stateSize, convKernel, fullAttentionInterval, true);
        }

        /** llama.cpp's layout from {@code full_attention_interval}. */
        public boolean isRecurrent(int layer) {
            return (layer + 1) % fullAttentionInterval != 0;
        }
    }

    /** YaRN context extension: {@code factor} times the original context, attention scaled by {@code logMultiplier}. */
    public record Yarn(float factor, int originalContext, float logMultiplier) {
    }

    /**
     * One model. {@code headDim} is the attention head size of ordinary attention (ignored with {@code mla});
     * {@code ffn} the width of dense FFN layers. {@code moe} null = dense; {@code mla} only for deepseek2;
     * {@code yarn} null = plain RoPE; {@code ropeDims} the leading dimensions of a head that RoPE rotates (0: all,
     * glm4moe rotates half); {@code slidingWindow} the window of gpt-oss's sliding layers (0: none).
     */
    public record Spec(String name, String arch, GgmlType weightType, long seed, int layers, int dim, int heads,
                       int kvHeads, int headDim, int ffn, Moe moe, Mla mla, float ropeTheta, Yarn yarn,
                       int contextLength, float rmsEps, boolean tiedEmbeddings, int ropeDims, int slidingWindow,
                       DeltaNet deltaNet) {

        /** No gated DeltaNet blocks. */
        public Spec(String name, String arch, GgmlType weightType, long seed, int layers, int dim, int heads,
                    int kvHeads, int headDim, int ffn, Moe moe, Mla mla, float ropeTheta, Yarn yarn,
                    int contextLength, float rmsEps, boolean tiedEmbeddings, int ropeDims, int slidingWindow) {
            this(name, arch, weightType, seed, layers, dim, heads, kvHeads, headDim, ffn, moe, mla, ropeTheta, yarn,
                    contextLength, rmsEps, tiedEmbeddings, ropeDims, slidingWindow, null);
        }

        /** Full-width RoPE, no sliding window. */
        public Spec(String name, String arch, GgmlType weightType, long seed, int layers, int dim, int heads,
                    int kvHeads, int headDim, int ffn, Moe moe, Mla mla, float ropeTheta, Yarn yarn,
                    int contextLength, float rmsEps, boolean tiedEmbeddings) {
            this(name, arch, weightType, seed, layers, dim, heads, kvHeads, headDim, ffn, moe, mla, ropeTheta, yarn,
                    contextLength, rmsEps, tiedEmbeddings, 0, 0);
        }

        public Spec {
            Objects.requireNonNull(name, "name");
            ArchitectureTraits a = ArchitectureTraits.of(arch);
            Objects.requireNonNull(weightType, "weightType");
            require(layers > 0 && dim > 0 && heads > 0 && kvHeads > 0 && heads % kvHeads == 0 && ffn > 0 && contextLength > 0,
                    "layers %d dim %d heads %d/%d ffn %d ctx %d", layers, dim, heads, kvHeads, ffn, contextLength);
            require(a.mla() == (mla != null), "%s %s MLA settings", arch, a.mla() ? "needs" : "takes no");
            require(mla == null || a.sparseAttention() == (mla.indexer() != null),
                    "%s %s", arch, a.sparseAttention() ? "needs an indexer" : "takes no indexer");
            require(mla == null || mla.indexer() == null || mla.indexer().fullEvery() == 0
                    || a == ArchitectureTraits.GLM_DSA, "%s has no shared indexers", arch);
            require(!a.requiresMoe() || moe != null, "%s needs experts", arch);
            require(a.allowsMoe() || moe == null, "%s takes no experts", arch);
            require(mla != null || headDim % 2 == 0, "head size %d must be even for RoPE", headDim);
            require(ropeDims == 0 || (mla == null && ropeDims > 0 && ropeDims <= headDim && ropeDims % 2 == 0),
                    "rope dimensions %d of heads of %d", ropeDims, headDim);
            require(slidingWindow >= 0 && (slidingWindow == 0 || a.has(ArchitectureTraits.Feature.SLIDING_WINDOW)),
                    "%s takes no sliding window %d", arch, slidingWindow);
            // glm4moe takes deepseek2's routing but not its expert groups (GLM-4.5 has one group)
            // deepseek32 and glm-dsa too: llama.cpp reads no expert groups for them
            require(moe == null || moe.groups() == 0 || a == ArchitectureTraits.DEEPSEEK2,
                    "%s has no group-limited routing", arch);
            require(a.has(ArchitectureTraits.Feature.DELTA_NET) == (deltaNet != null), "%s %s DeltaNet settings", arch,
                    deltaNet == null ? "needs" : "takes no");
            require(deltaNet == null || !deltaNet.fusedInput() || a.has(ArchitectureTraits.Feature.GROUPED_DELTA_NET),
                    "%s has no fused ssm_in", arch);
            require(a != ArchitectureTraits.MINIMAX_M2 || moe == null
                    || (moe.shared() == 0 && moe.leadingDense() == 0 && moe.groups() == 0 && moe.probsBias()
                        && moe.gating() == Gating.SIGMOID && moe.normalizeWeights() && moe.expertFfn() == ffn),
                    "%s routes by sigmoid with exp_probs_b, weights renormalised, experts as wide as ffn in every layer",
                    arch);
            require(moe == null || a.allowsDeepseekRouting() || a == ArchitectureTraits.MINIMAX_M2
                    || ((moe.shared() == 0 || a.has(ArchitectureTraits.Feature.DELTA_NET)) && moe.leadingDense() == 0 && moe.groups() == 0 && !moe.probsBias()
                        && moe.gating() == Gating.SOFTMAX), "%s supports only plain softmax experts", arch);
            require(moe == null || moe.leadingDense() < layers, "all %d layers are dense", layers);
            // llama's Mixtral experts are sized by feed_forward_length: there is no separate expert width.
            require(a != ArchitectureTraits.LLAMA || moe == null || moe.expertFfn() == ffn,
                    "llama experts must be as wide as ffn (%d), not %d", ffn, moe == null ? 0 : moe.expertFfn());
        }

        public ArchitectureTraits architecture() {
            return ArchitectureTraits.of(arch);
        }

        public Spec withWeightType(GgmlType type) {
            return new Spec(name, arch, type, seed, layers, dim, heads, kvHeads, headDim, ffn, moe, mla, ropeTheta, yarn,
                    contextLength, rmsEps, tiedEmbeddings, ropeDims, slidingWindow, deltaNet);
        }

        public Spec withSeed(long newSeed) {
            return new Spec(name, arch, weightType, newSeed, layers, dim, heads, kvHeads, headDim, ffn, moe, mla, ropeTheta,
                    yarn, contextLength, rmsEps, tiedEmbeddings, ropeDims, slidingWindow, deltaNet);
        }

        public Spec withName(String newName) {
            return new Spec(newName, arch, weightType, seed, layers, dim, heads, kvHeads, headDim, ffn, moe, mla, ropeTheta,
                    yarn, contextLength, rmsEps, tiedEmbeddings, ropeDims, slidingWindow, deltaNet);
        }

        public Spec withMla(Mla newMla) {
            return new Spec(name, arch, weightType, seed, layers, dim, heads, kvHeads, headDim, ffn, moe, newMla, ropeTheta,
                    yarn, contextLength, rmsEps, tiedEmbeddings, ropeDims, slidingWindow, deltaNet);
        }

        public Spec withDeltaNet(DeltaNet newDeltaNet) {
            return new Spec(name, arch, weightType, seed, layers, dim, heads, kvHeads, headDim, ffn, moe, mla, ropeTheta,
                    yarn, contextLength, rmsEps, tiedEmbeddings, ropeDims, slidingWindow, newDeltaNet);
        }

        public Spec withTiedEmbeddings(boolean tied) {
            return new Spec(name, arch, weightType, seed, layers, dim, heads, kvHeads, headDim, ffn, moe, mla, ropeTheta,
                    yarn, contextLength, rmsEps, tied, ropeDims, slidingWindow, deltaNet);
        }

        /** Number of weights, all tensors counted. */
        public long parameterCount() {
            return TensorLayout.of(this, ByteBpeVocab.standard().size()).stream().mapToLong(TensorLayout.Entry::elements).sum();
        }
    }

    // ---- presets: all rows are multiples of 256 where llama.cpp's K-quants need it, so Q4_K_M stays Q4_K ----

    public static Spec tinyLlama() {
        return new Spec("tiny-llama", "llama", GgmlType.F32, 1, 2, 256, 4, 2, 64, 512, null, null,
                10_000f, null, 2048, 1e-5f, false);
    }

    public static Spec tinyLlamaMoe() {
        return new Spec("tiny-llama-moe", "llama", GgmlType.F32, 2, 2, 256, 4, 2, 64, 256,
                Moe.softmax(4, 2, 256), null, 10_000f, null, 2048, 1e-5f, false);
    }

    public static Spec tinyQwen3() {
        return new Spec("tiny-qwen3", "qwen3", GgmlType.F32, 3, 2, 256, 4, 2, 64, 512, null, null,
                1_000_000f, null, 4096, 1e-6f, false);
    }

    public static Spec tinyQwen3Moe() {
        return new Spec("tiny-qwen3moe", "qwen3moe", GgmlType.F32, 4, 2, 256, 4, 2, 64, 512,
                Moe.softmax(8, 2, 256), null, 1_000_000f, null, 4096, 1e-6f, false);
    }

    /** DeepSeek-V3 in miniature: split MLA, one dense layer first, shared expert, sigmoid groups, YaRN x4. */
    public static Spec tinyDeepseek2() {
        Moe moe = new Moe(8, 2, 256, 1, 1, Gating.SIGMOID, true, 2.5f, 4, 2, true);
        Mla mla = new Mla(128, 128, 64, 32, 64, true);
        return new Spec("tiny-deepseek2", "deepseek2", GgmlType.F32, 5, 3, 256, 4, 4, 0, 512, moe, mla,
                10_000f, new Yarn(4f, 1024, 0.1f), 4096, 1e-6f, false);
    }

    /**
     * DeepSeek-V3.2 in miniature: {@link #tinyDeepseek2()}'s blocks (without expert groups, which llama.cpp does not
     * read for deepseek32) plus a lightning indexer of 8 heads of 64 keeping the top 12 positions, so every prompt
     * longer than 12 tokens attends sparsely.
     */
    public static Spec tinyDeepseek32() {
        Moe moe = new Moe(8, 2, 256, 1, 1, Gating.SIGMOID, true, 2.5f, 0, 0, true);
        Mla mla = new Mla(128, 128, 64, 32, 64, true, new Indexer(8, 64, 12));
        return new Spec("tiny-deepseek32", "deepseek32", GgmlType.F32, 16, 3, 256, 4, 4, 0, 512, moe, mla,
                10_000f, new Yarn(4f, 1024, 0.1f), 4096, 1e-6f, false);
    }

    /**
     * As {@link #wideDeepseek2()} for deepseek32: width 512, 8 heads, an indexer of 16 heads of 128 (DeepSeek-V3.2's
     * head size) keeping the top 24 positions, 16 experts with 4 used.
     */
    public static Spec wideDeepseek32() {
        Moe moe = new Moe(16, 4, 256, 1, 1, Gating.SIGMOID, true, 2.5f, 0, 0, true);
        Mla mla = new Mla(256, 256, 64, 32, 64, true, new Indexer(16, 128, 24));
        return new Spec("wide-deepseek32", "deepseek32", GgmlType.F32, 17, 2, 512, 8, 8, 0, 1024, moe, mla,
                10_000f, new Yarn(4f, 1024, 0.1f), 4096, 1e-6f, false);
    }

    /**
     * GLM-5 in miniature: {@link #tinyDeepseek32()}'s blocks with an indexer keeping the top 10 positions, GLM's
     * plain rope (no YaRN, base 1M) and rms eps, sigmoid routing with {@code exp_probs_b} and a shared expert, and
     * the trailing NextN block. A context under 1M tokens, so every block runs its own indexer (llama.cpp shares
     * them between blocks only for GLM-5.2's million-token files).
     */
    public static Spec tinyGlmDsa() {
        Moe moe = new Moe(8, 2, 256, 1, 1, Gating.SIGMOID, true, 2.5f, 0, 0, true);
        Mla mla = new Mla(128, 128, 64, 32, 64, true, new Indexer(8, 64, 10));
        return new Spec("tiny-glm-dsa", "glm-dsa", GgmlType.F32, 19, 3, 256, 4, 4, 0, 512, moe, mla,
                1_000_000f, null, 4096, 1e-5f, false);
    }

    /**
     * {@link #tinyGlmDsa()} with GLM-5.2's shared indexers ({@code attention.indexer.types} 1, 0, 1): the middle block
     * runs no indexer and attends what the first block's chose.
     */
    public static Spec tinyGlmDsaSharedIndexers() {
        Spec own = tinyGlmDsa();
        return own.withName("tiny-glm-dsa-shared-indexers").withMla(own.mla().withIndexer(own.mla().indexer().sharedBy(2)));
    }

    /** As {@link #wideDeepseek32()} for glm-dsa: an indexer of 16 heads of 128 (GLM-5's head size) keeping the top 20. */
    public static Spec wideGlmDsa() {
        Moe moe = new Moe(16, 4, 256, 1, 1, Gating.SIGMOID, true, 2.5f, 0, 0, true);
        Mla mla = new Mla(256, 256, 64, 32, 64, true, new Indexer(16, 128, 20));
        return new Spec("wide-glm-dsa", "glm-dsa", GgmlType.F32, 20, 2, 512, 8, 8, 0, 1024, moe, mla,
                1_000_000f, null, 4096, 1e-5f, false);
    }

    /**
     * The parity suites' second shape of each architecture, chosen to differ from the tiny ones wherever an order
     * could hide: model width 512 (two K-quant super-blocks per row), query heads of 128 sharing a KV head four ways
     * (QK-norm over 128), 16 experts with 4 used (a four-way weight sum and the router's 16-lane softmax chunk).
     */
    public static Spec wideQwen3Moe() {
        return new Spec("wide-qwen3moe", "qwen3moe", GgmlType.F32, 8, 2, 512, 8, 2, 128, 1024,
                Moe.softmax(16, 4, 256), null, 1_000_000f, null, 4096, 1e-6f, false);
    }

    /** As {@link #wideQwen3Moe()} for deepseek2: MLA heads of 64 + 32, 16 experts in 4 groups, 4 used from 2 groups. */
    public static Spec wideDeepseek2() {
        Moe moe = new Moe(16, 4, 256, 1, 1, Gating.SIGMOID, true, 2.5f, 4, 2, true);
        Mla mla = new Mla(256, 256, 64, 32, 64, true);
        return new Spec("wide-deepseek2", "deepseek2", GgmlType.F32, 9, 2, 512, 8, 8, 0, 1024, moe, mla,
                10_000f, new Yarn(4f, 1024, 0.1f), 4096, 1e-6f, false);
    }

    /**
     * A llama2.c-like llama (its 260K story checkpoint's shape): width 64, 8 heads sharing 4 KV heads of 8, FFN
     * width 172 (no multiple of 16 or 32: every float kernel's tail, and llama-quantize keeps such rows F16 in a
     * Q8_0 file). Meant with {@link SpmVocab#llama2c512()}.
     */
    public static Spec oddLlama() {
        return new Spec("odd-llama", "llama", GgmlType.F32, 11, 5, 64, 8, 4, 8, 172, null, null,
                10_000f, null, 2048, 1e-5f, false);
    }

    /** As {@link #wideQwen3Moe()} for a dense llama: width 512, 8 heads of 64 on 2 KV heads, FFN 1536 (six super-blocks). */
    public static Spec wideLlama() {
        return new Spec("wide-llama", "llama", GgmlType.F32, 10, 2, 512, 8, 2, 64, 1536, null, null,
                500_000f, null, 4096, 1e-5f, false);
    }

    /**
     * GLM-4.5 in miniature: one dense layer first, Q/K/V biases and QK-norm, NeoX rope over half of each head of
     * 128 (GLM-4.5's partial rotary factor), 8 experts with 2 used by sigmoid with {@code exp_probs_b}, weights
     * renormalised and scaled by 2.5, a shared expert, and GLM-4.5's trailing NextN block (which MTP drafting runs).
     */
    public static Spec tinyGlm4Moe() {
        Moe moe = new Moe(8, 2, 256, 1, 1, Gating.SIGMOID, true, 2.5f, 0, 0, true);
        return new Spec("tiny-glm4moe", "glm4moe", GgmlType.F32, 11, 3, 256, 4, 2, 128, 512, moe, null,
                1_000_000f, null, 4096, 1e-5f, false, 64, 0);
    }

    /**
     * gpt-oss in miniature: 4 layers, the even ones attending a sliding window of 16 positions (shorter than the
     * parity prompts, so the window is exercised), attention sinks, biases everywhere, 8 experts with 4 used, YaRN
     * x4 as gpt-oss's x32.
     */
    public static Spec tinyGptOss() {
        return new Spec("tiny-gpt-oss", "gpt-oss", GgmlType.F32, 12, 4, 256, 4, 2, 64, 256,
                Moe.softmax(8, 4, 256), null, 150_000f, new Yarn(4f, 1024, 0f), 4096, 1e-5f, false, 0, 16);
    }

    /**
     * As {@link #wideQwen3Moe()} for glm4moe: width 512, heads of 128 (rope over 64 of them) sharing a KV head four
     * ways, one dense layer, then 16 experts with 4 used (a four-way renormalisation sum) and a shared expert.
     */
    public static Spec wideGlm4Moe() {
        Moe moe = new Moe(16, 4, 256, 1, 1, Gating.SIGMOID, true, 2.5f, 0, 0, true);
        return new Spec("wide-glm4moe", "glm4moe", GgmlType.F32, 13, 2, 512, 8, 2, 128, 1024, moe, null,
                1_000_000f, null, 4096, 1e-5f, false, 64, 0);
    }

    /** As {@link #wideQwen3Moe()} for gpt-oss: width 512, 8 heads of 64 on 2 KV heads, a window of 32, 16 experts with 4 used. */
    public static Spec wideGptOss() {
        return new Spec("wide-gpt-oss", "gpt-oss", GgmlType.F32, 14, 2, 512, 8, 2, 64, 512,
                Moe.softmax(16, 4, 512), null, 150_000f, new Yarn(4f, 1024, 0f), 4096, 1e-5f, false, 0, 32);
    }

    /**
     * Qwen3.5-35B-A3B in miniature: 4 blocks, every second one full attention (the real model's interval is 4),
     * DeltaNet with 2 query/key heads shared by 4 value heads of 64 and a 4-tap convolution; full attention with 4
     * output-gated heads of 64 on 2 KV heads, rope over a quarter of each head (the real partial rotary factor);
     * 8 experts with 2 used and a gated shared expert.
     */
    public static Spec tinyQwen35Moe() {
        return new Spec("tiny-qwen35moe", "qwen35moe", GgmlType.F32, 16, 4, 256, 4, 2, 64, 256,
                new Moe(8, 2, 256, 1, 0, Gating.SOFTMAX, true, 1f, 0, 0, false), null, 10_000_000f, null, 4096,
                1e-6f, false, 16, 0, new DeltaNet(2, 4, 64, 4, 2));
    }

    /**
     * As {@link #tinyQwen35Moe()} in other shapes: width 512, 3 DeltaNet blocks to a full-attention one (the real
     * interval of 4), value heads of 128 (the real size) four to a key head, attention heads of 128, 16 experts with
     * 4 used, a shared expert twice an expert's width.
     */
    public static Spec wideQwen35Moe() {
        return new Spec("wide-qwen35moe", "qwen35moe", GgmlType.F32, 17, 4, 512, 4, 2, 128, 256,
                new Moe(16, 4, 256, 2, 0, Gating.SOFTMAX, true, 1f, 0, 0, false), null, 10_000_000f, null, 4096,
                1e-6f, false, 32, 0, new DeltaNet(1, 4, 128, 4, 4));
    }

    /**
     * {@link #benchQwen3Moe()}'s width, experts and weight type as qwen35moe: 4 blocks, three gated DeltaNet (4
     * query/key heads, 8 value heads of 128, as Qwen3.5-35B-A3B's heads) and one full attention (8 heads of 128 on 2
     * KV heads, rope over 32), 32 experts of 512 with 4 used and a shared expert of 512.
     */
    public static Spec benchQwen35Moe() {
        return new Spec("bench-qwen35moe", "qwen35moe", GgmlType.Q8_0, 18, 4, 1024, 8, 2, 128, 512,
                new Moe(32, 4, 512, 1, 0, Gating.SOFTMAX, true, 1f, 0, 0, false), null, 10_000_000f, null, 4096,
                1e-6f, false, 32, 0, new DeltaNet(4, 8, 128, 4, 4));
    }

    /**
     * Qwen3-Next-80B-A3B in miniature: {@link #tinyQwen35Moe()}'s shapes as qwen3next (plain NeoX rope over a quarter
     * of each head, one beta/alpha projection), 2 query/key heads each shared by 2 consecutive value heads.
     */
    public static Spec tinyQwen3Next() {
        return new Spec("tiny-qwen3next", "qwen3next", GgmlType.F32, 19, 4, 256, 4, 2, 64, 256,
                new Moe(8, 2, 256, 1, 0, Gating.SOFTMAX, true, 1f, 0, 0, false), null, 10_000_000f, null, 4096,
                1e-6f, false, 16, 0, new DeltaNet(2, 4, 64, 4, 2));
    }

    /**
     * As {@link #tinyQwen3Next()} in other shapes: width 512, 3 DeltaNet blocks to a full-attention one (the real
     * interval), value heads of 128 (the real size) two to a key head (the real model: 32 to 16), attention heads of 128
     * on 2 KV heads, 16 experts with 4 used, a shared expert twice an expert's width.
     */
    public static Spec wideQwen3Next() {
        return new Spec("wide-qwen3next", "qwen3next", GgmlType.F32, 20, 4, 512, 4, 2, 128, 256,
                new Moe(16, 4, 256, 2, 0, Gating.SOFTMAX, true, 1f, 0, 0, false), null, 10_000_000f, null, 4096,
                1e-6f, false, 32, 0, new DeltaNet(2, 4, 128, 4, 4));
    }

    /** {@link #benchQwen35Moe()}'s shapes and weight type as qwen3next, for the engine benchmark. */
    public static Spec benchQwen3Next() {
        return new Spec("bench-qwen3next", "qwen3next", GgmlType.Q8_0, 21, 4, 1024, 8, 2, 128, 512,
                new Moe(32, 4, 512, 1, 0, Gating.SOFTMAX, true, 1f, 0, 0, false), null, 10_000_000f, null, 4096,
                1e-6f, false, 32, 0, new DeltaNet(4, 8, 128, 4, 4));
    }

    /**
     * MiniMax-M2 in miniature: 3 layers, 4 query heads of 128 on 2 KV heads, NeoX rope over half of each head (the
     * real rotary_dim 64 of 128), QK-norm over the whole projection, 8 experts with 2 used by sigmoid with
     * {@code exp_probs_b}, weights renormalised.
     */
    public static Spec tinyMinimaxM2() {
        return new Spec("tiny-minimax-m2", "minimax-m2", GgmlType.F32, 19, 3, 256, 4, 2, 128, 256,
                new Moe(8, 2, 256, 0, 0, Gating.SIGMOID, true, 1f, 0, 0, true), null, 5_000_000f, null, 4096,
                1e-6f, false, 64, 0);
    }

    /**
     * As {@link #wideQwen3Moe()} for minimax-m2: width 512, 8 heads of 64 (rope over 32) sharing a KV head four ways,
     * so the QK-norm spans 512 query and 128 key values, 16 experts of 512 with 4 used (a four-way weight sum).
     */
    public static Spec wideMinimaxM2() {
        return new Spec("wide-minimax-m2", "minimax-m2", GgmlType.F32, 20, 2, 512, 8, 2, 64, 512,
                new Moe(16, 4, 512, 0, 0, Gating.SIGMOID, true, 1f, 0, 0, true), null, 5_000_000f, null, 4096,
                1e-6f, false, 32, 0);
    }

    /**
     * {@link #benchQwen3Moe()}'s width and experts as minimax-m2, for the engine benchmark: 4 layers, 8 heads of 128
     * (rope over 64) on 2 KV heads, 32 experts of 512 with 4 used by sigmoid with {@code exp_probs_b}.
     */
    public static Spec benchMinimaxM2() {
        return new Spec("bench-minimax-m2", "minimax-m2", GgmlType.Q8_0, 22, 4, 1024, 8, 2, 128, 512,
                new Moe(32, 4, 512, 0, 0, Gating.SIGMOID, true, 1f, 0, 0, true), null, 5_000_000f, null, 4096,
                1e-6f, false, 64, 0);
    }

    /** A Qwen3-MoE big enough to measure kernels rather than overhead: about 214M weights, 32 experts, 4 used. */
    public static Spec benchQwen3Moe() {
        return new Spec("bench-qwen3moe", "qwen3moe", GgmlType.Q8_0, 6, 4, 1024, 16, 4, 64, 2048,
                Moe.softmax(32, 4, 512), null, 1_000_000f, null, 4096, 1e-6f, false);
    }

    /**
     * A Qwen3-MoE of realistic layer shapes for the GPU tier's benchmark: dim 2048, 8 layers, 64 experts of
     * FFN width 768, 8 used (Qwen3-30B-A3B has dim 2048, 128 experts of 768, 8 used), Q8_0: about 2.6 GB of
     * experts, 5 MB each, so the CPU's expert work dominates a decode step. Routing is skewed
     * ({@code routingSkew} 0.8: the top 10 % of experts take 36-37 % of the routed tokens, measured): with random router
     * rows of one scale every expert is chosen about equally often, which no frequency-based placement can
     * exploit, while trained MoE models route unevenly.
     */
    public static Spec benchQwen3MoeSkewed() {
        return new Spec("bench-qwen3moe-skewed", "qwen3moe", GgmlType.Q8_0, 7, 8, 2048, 16, 4, 128, 6144,
                Moe.softmax(64, 8, 768).withRoutingSkew(0.8f), null, 1_000_000f, null, 4096, 1e-6f, false);
    }

    /**
     * {@link #benchQwen3MoeSkewed()}'s shapes with flat routing (router rows of one scale, another seed): every expert
     * is chosen about equally often (the top 10 % of experts take 12.4 % of 400 random activations' choices, against
     * 31.7 % on the skewed preset: RoutingSkewTest), so 10 % of the expert bytes on the GPU serve about 10 % of the
     * reads (11.2 % measured on the device), the case frequency-based placement cannot help, at a realistic size
     * (2.66 GB at Q8_0; {@link #benchQwen3Moe()} is the small flat model).
     */
    public static Spec benchQwen3MoeFlat() {
        return new Spec("bench-qwen3moe-flat", "qwen3moe", GgmlType.Q8_0, 15, 8, 2048, 16, 4, 128, 6144,
                Moe.softmax(64, 8, 768), null, 1_000_000f, null, 4096, 1e-6f, false);
    }

    /**
     * A DeepSeek-V3.2 for the engine benchmark: dim 1024, 4 layers (one dense), 16 MLA heads (q LoRA 384, kv LoRA 256,
     * heads of 64 + 32), an indexer of 16 heads of 128 keeping the top 256 positions (so a 512-token prompt and its
     * decode attend sparsely), 32 experts of 512 with 4 used and a shared one: 190 MB in Q8_0.
     */
    public static Spec benchDeepseek32() {
        Moe moe = new Moe(32, 4, 512, 1, 1, Gating.SIGMOID, true, 2.5f, 0, 0, true);
        Mla mla = new Mla(384, 256, 64, 32, 64, true, new Indexer(16, 128, 256));
        return new Spec("bench-deepseek32", "deepseek32", GgmlType.Q8_0, 18, 4, 1024, 16, 16, 0, 2048, moe, mla,
                10_000f, new Yarn(4f, 1024, 0.1f), 4096, 1e-6f, false);
    }

    /** A preset by its name as {@link SyntheticModelsMain} takes it ({@code tinyLlama}, {@code tiny-llama}, ...). */
    public static Spec preset(String name) {
        return switch (name.replace("-", "").toLowerCase(java.util.Locale.ROOT)) {
            case "tinyllama" -> tinyLlama();
            case "tinyllamamoe" -> tinyLlamaMoe();
            case "tinyqwen3" -> tinyQwen3();
            case "tinyqwen3moe" -> tinyQwen3Moe();
            case "tinydeepseek2" -> tinyDeepseek2();
            case "wideqwen3moe" -> wideQwen3Moe();
            case "widedeepseek2" -> wideDeepseek2();
            case "tinydeepseek32" -> tinyDeepseek32();
            case "widedeepseek32" -> wideDeepseek32();
            case "tinyglmdsa" -> tinyGlmDsa();
            case "wideglmdsa" -> wideGlmDsa();
            case "tinyglmdsasharedindexers" -> tinyGlmDsaSharedIndexers();
            case "widellama" -> wideLlama();
            case "wideglm4moe" -> wideGlm4Moe();
            case "widegptoss" -> wideGptOss();
            case "tinyglm4moe" -> tinyGlm4Moe();
            case "tinygptoss" -> tinyGptOss();
            case "benchqwen3moe" -> benchQwen3Moe();
            case "benchdeepseek32" -> benchDeepseek32();
            case "benchqwen3moeskewed" -> benchQwen3MoeSkewed();
            case "benchqwen3moeflat" -> benchQwen3MoeFlat();
            case "tinyqwen35moe" -> tinyQwen35Moe();
            case "wideqwen35moe" -> wideQwen35Moe();
            case "benchqwen35moe" -> benchQwen35Moe();
            case "tinyqwen3next" -> tinyQwen3Next();
            case "wideqwen3next" -> wideQwen3Next();
            case "benchqwen3next" -> benchQwen3Next();
            case "tinyminimaxm2" -> tinyMinimaxM2();
            case "wideminimaxm2" -> wideMinimaxM2();
            case "benchminimaxm2" -> benchMinimaxM2();
            default -> throw new IllegalArgumentException("unknown preset '" + name
                    + "' (tinyLlama, tinyLlamaMoe, tinyQwen3, tinyQwen3Moe, tinyDeepseek2, tinyDeepseek32, wideDeepseek32, tinyGlmDsa, tinyGlmDsaSharedIndexers, wideGlmDsa, tinyGlm4Moe, tinyGptOss, wideQwen3Moe, wideDeepseek2, wideLlama, wideGlm4Moe, wideGptOss, benchQwen3Moe, benchQwen3MoeSkewed, benchQwen3MoeFlat, benchDeepseek32, tinyQwen35Moe, wideQwen35Moe, benchQwen35Moe, tinyQwen3Next, wideQwen3Next, benchQwen3Next, tinyMinimaxM2, wideMinimaxM2, benchMinimaxM2)");
        };
    }

    /** Writes {@code spec} as a GGUF file at {@code target} (parent directories created) and returns it. */
    public static Path write(Spec spec, Path target) {
        return write(spec, ByteBpeVocab.standard(), target);
    }

    /** As {@link #write(Spec, Path)}, with {@code chatTemplate} as {@code tokenizer.chat_template} (chat-format tests). */
    public static Path write(Spec spec, Path target, String chatTemplate) {
        return write(spec, ByteBpeVocab.standard(), target, chatTemplate);
    }

    /** As {@link #write(Spec, Path)}, with another vocabulary ({@link SpmVocab} for a llama2.c-like model). */
    public static Path write(Spec spec, Vocab vocab, Path target) {
        return write(spec, vocab, target, null);
    }

    private static Path write(Spec spec, Vocab vocab, Path target, String chatTemplate) {
        GgufWriter w = new GgufWriter();
        ModelMetadata.write(spec, vocab, w);
        if (chatTemplate != null) {
            w.putString("tokenizer.chat_template", chatTemplate); // over the vocabulary's own
        }
        RandomWeights weights = new RandomWeights(spec.seed(), spec.weightType());
        for (TensorLayout.Entry t : TensorLayout.of(spec, vocab.size())) {
            weights.add(w, t);
        }
        try {
            Path parent = target.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        w.write(target);
        return target;
    }

    static void require(boolean condition, String format, Object... args) {
        if (!condition) {
            throw new IllegalArgumentException("invalid synthetic model: " + format.formatted(args));
        }
    }
}
