package dev.lazarus.kt.model;

import java.util.Arrays;
import java.util.Locale;

/**
 * The architectures this engine runs. Each is a configuration of the one {@link TransformerBlock}:
 * what differs is data (rope style, how experts are chosen and weighed, which layers slide their
 * attention window), never forward code.
 */
public enum Architecture {
    /** Dense llama, or Mixtral-style experts when the GGUF has {@code expert_count}. */
    LLAMA("llama", RopeStyle.NORMAL, true, MoeConfig.Gating.SOFTMAX, 0),
    QWEN3("qwen3", RopeStyle.NEOX, true, MoeConfig.Gating.SOFTMAX, 0),
    QWEN3MOE("qwen3moe", RopeStyle.NEOX, true, MoeConfig.Gating.SOFTMAX, 0),
    /**
     * Qwen3.5/3.6 MoE: gated DeltaNet blocks ({@link DeltaNetConfig}) with every n-th block full attention whose
     * queries carry a per-head output gate, experts with a sigmoid-gated shared expert. Its multi-section rope
     * (IMROPE) is NeoX rope over {@code rope.dimension_count} for a text token, except the pairs of the extra
     * section, whose position is 0 ({@link RopeConfig#extraSection}).
     */
    QWEN35MOE("qwen35moe", RopeStyle.NEOX, true, MoeConfig.Gating.SOFTMAX, 0),
    /**
     * Qwen3-Next: qwen35moe's blocks with plain NeoX rope over {@code rope.dimension_count}, whose value heads come in
     * groups per key head and whose beta and alpha come from one projection ({@link DeltaNetConfig#groupedHeads}).
     */
    QWEN3NEXT("qwen3next", RopeStyle.NEOX, true, MoeConfig.Gating.SOFTMAX, 0),
    /** MLA attention, shared experts, sigmoid group routing; normalisation as the GGUF says. */
    DEEPSEEK2("deepseek2", RopeStyle.NORMAL, false, MoeConfig.Gating.SOFTMAX, 0),
    /**
     * DeepSeek-V3.2: deepseek2's blocks with DeepSeek Sparse Attention, a lightning indexer per block whose scores
     * pick the cached positions each query attends ({@link LightningIndexer}).
     */
    DEEPSEEK32("deepseek32", RopeStyle.NORMAL, false, MoeConfig.Gating.SOFTMAX, 0),
    /**
     * GLM-5.x: deepseek32's blocks (latent attention, lightning indexer, sparse attention) with GLM's routing
     * defaults: sigmoid gating unless the GGUF says otherwise, and a trailing NextN block that neither engine runs.
     * Its indexer ropes in the normal pairing and layer-norms its key without an eps ({@link #indexerRopeStyle},
     * {@link #indexerNormEps}), as llama.cpp's glm-dsa graph does.
     */
    GLM_DSA("glm-dsa", RopeStyle.NORMAL, false, MoeConfig.Gating.SIGMOID, 0),
    /**
     * GLM-4.5 / 4.6: attention biases, optional QK-norm, partial rope, leading dense blocks, sigmoid routing with
     * a selection bias and a shared expert (deepseek2's routing on ordinary attention); gating sigmoid unless the
     * GGUF says otherwise, as llama.cpp defaults it.
     */
    GLM4MOE("glm4moe", RopeStyle.NEOX, false, MoeConfig.Gating.SIGMOID, 0),
    /**
     * gpt-oss: biases on every projection and on the router, attention sinks, a sliding window on every other
     * block (llama.cpp's swa pattern 2: the even blocks), top-k on the raw router logits then a softmax over the
     * chosen ones, and the clamped SwiGLU ({@link Glu.Kind#SWIGLU_OAI}).
     */
    GPT_OSS("gpt-oss", RopeStyle.NEOX, false, MoeConfig.Gating.SOFTMAX_WEIGHT, 2),
    /**
     * MiniMax-M2: grouped-query attention with partial NeoX rope and a QK-norm over the whole query (and key)
     * projection, across heads; sigmoid routing with {@code exp_probs_b}, weights always renormalised and never scaled
     * (llama.cpp reads neither {@code expert_weights_norm} nor {@code expert_weights_scale} for it), no shared expert.
     */
    MINIMAX_M2("minimax-m2", RopeStyle.NEOX, true, MoeConfig.Gating.SIGMOID, 0);

    private final String ggufName;
    private final RopeStyle ropeStyle;
    private final boolean alwaysNormalizesExpertWeights;
    private final MoeConfig.Gating defaultGating;
    private final int slidingWindowPattern;

    Architecture(String ggufName, RopeStyle ropeStyle, boolean alwaysNormalizesExpertWeights,
                 MoeConfig.Gating defaultGating, int slidingWindowPattern) {
        this.ggufName = ggufName;
        this.ropeStyle = ropeStyle;
        this.alwaysNormalizesExpertWeights = alwaysNormalizesExpertWeights;
        this.defaultGating = defaultGating;
        this.slidingWindowPattern = slidingWindowPattern;
    }

    public String ggufName() {
        return ggufName;
    }

    public RopeStyle ropeStyle() {
        return ropeStyle;
    }

    /** llama.cpp renormalises the top-k weights unconditionally for llama, qwen3moe and minimax-m2. */
    boolean alwaysNormalizesExpertWeights() {
        return alwaysNormalizesExpertWeights;
    }

    /** The gating when the GGUF has no {@code expert_gating_func} (gpt-oss: always this one). */
    MoeConfig.Gating defaultGating() {
        return defaultGating;
    }

    /**
     * llama.cpp's {@code set_swa_pattern(n)}: with a window, block {@code b} slides when {@code b % n < n - 1};
     * 0 when the architecture has no sliding-window blocks.
     */
    int slidingWindowPattern() {
        return slidingWindowPattern;
    }

    /** deepseek2's multi-head latent attention (and its YaRN score scale): deepseek2, deepseek32 and glm-dsa. */
    boolean latentAttention() {
        return this == DEEPSEEK2 || sparseAttention();
    }

    /** DeepSeek Sparse Attention: a lightning indexer per block picks the positions each query attends. */
    boolean sparseAttention() {
        return this == DEEPSEEK32 || this == GLM_DSA;
    }

    /** The pairing of the indexer's rope: llama.cpp's deepseek32 graph ropes it NeoX, its glm-dsa graph normally. */
    RopeStyle indexerRopeStyle() {
        return this == DEEPSEEK32 ? RopeStyle.NEOX : RopeStyle.NORMAL;
    }

    /**
     * eps of the indexer key's layer norm ({@code f_norm_eps}): llama.cpp fixes it at 1e-6 for deepseek32 and leaves
     * it at 0 for glm-dsa, whose loader reads no layer-norm eps.
     */
    float indexerNormEps() {
        return this == DEEPSEEK32 ? 1e-6f : 0f;
    }

    /** Gated DeltaNet blocks between full-attention ones ({@link DeltaNetConfig}): qwen35moe and qwen3next. */
    public boolean gatedDeltaNet() {
        return this == QWEN35MOE || this == QWEN3NEXT;
    }

    public static Architecture fromGguf(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        return Arrays.stream(values())
                .filter(a -> a.ggufName.equals(n))
                .findFirst()
                .orElseThrow(() -> new ModelFormatException("unsupported architecture '" + name + "' (supported: "
                        + Arrays.stream(values()).map(Architecture::ggufName).toList() + ")"));
    }
}
