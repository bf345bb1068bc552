package dev.lazarus.kt.synthetic;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;

/** What the synthetic generator must know about each llama.cpp architecture it writes. */
public enum ArchitectureTraits {
    /** Dense Llama, or Mixtral when given experts. Normal (non-NEOX) RoPE. */
    LLAMA("llama", false, false, true, false),
    /** Dense Qwen3: per-head RMS norm of Q and K before RoPE. */
    QWEN3("qwen3", true, false, false, false),
    /** Qwen3 with softmax-routed experts in every layer. */
    QWEN3MOE("qwen3moe", true, false, true, true),
    /** DeepSeek V2/V3: multi-head latent attention, shared expert, leading dense layers. */
    DEEPSEEK2("deepseek2", false, true, true, true),
    /** DeepSeek-V3.2: deepseek2 with the lightning indexer's sparse attention ({@link SyntheticModels.Mla#indexer}). */
    DEEPSEEK32("deepseek32", false, true, true, true),
    /** GLM-5.x: deepseek32's blocks with GLM's routing and its trailing NextN block (run by neither engine). */
    GLM_DSA("glm-dsa", false, true, true, true, Feature.NEXTN_BLOCK),
    /**
     * GLM-4.5: Q/K/V biases, QK-norm (the 355B model's; the Air has none), partial NeoX rope, leading dense layers,
     * sigmoid routing with {@code exp_probs_b} and a shared expert, the FFN norm named {@code post_attention_norm},
     * and one NextN block after the model's layers (counted in {@code block_count}, left out of the forward pass; MTP drafting runs it).
     */
    GLM4MOE("glm4moe", true, false, true, true, Feature.QKV_BIAS, Feature.POST_ATTENTION_NORM, Feature.NEXTN_BLOCK),
    /**
     * gpt-oss: biases on Q/K/V/output, attention sinks, a sliding window on the even layers, {@code post_attention_norm},
     * a biased router whose top-k logits are softmaxed, biased experts with the clamped SwiGLU.
     */
    GPT_OSS("gpt-oss", false, false, true, true, Feature.QKV_BIAS, Feature.OUTPUT_BIAS, Feature.SINKS,
            Feature.POST_ATTENTION_NORM, Feature.EXPERT_BIASES, Feature.SLIDING_WINDOW),
    /**
     * Qwen3.5/3.6 MoE: gated DeltaNet blocks between full-attention ones (every {@code fullAttentionInterval}-th),
     * whose QK-normed queries carry a per-head output gate; {@code post_attention_norm}; softmax experts and a
     * shared expert gated by {@code ffn_gate_inp_shexp}.
     */
    QWEN35MOE("qwen35moe", true, false, true, true, Feature.POST_ATTENTION_NORM, Feature.DELTA_NET),
    /**
     * Qwen3-Next: qwen35moe's blocks with plain NeoX rope (no {@code rope.dimension_sections}) and one
     * {@code ssm_ba} projection, its value heads grouped by key head.
     */
    QWEN3NEXT("qwen3next", true, false, true, true, Feature.POST_ATTENTION_NORM, Feature.DELTA_NET,
            Feature.GROUPED_DELTA_NET),
    /**
     * MiniMax-M2: partial NeoX rope, a QK-norm over the whole query (and key) projection across heads, experts in
     * every layer routed by sigmoid with {@code exp_probs_b} (no shared expert), their width {@code feed_forward_length}.
     */
    MINIMAX_M2("minimax-m2", true, false, true, true, Feature.WHOLE_QK_NORM);

    /** Tensors and keys beyond the common block that some architectures have. */
    public enum Feature {
        /** {@code attn_q/k/v.bias}. */
        QKV_BIAS,
        /** {@code attn_output.bias}. */
        OUTPUT_BIAS,
        /** {@code attn_sinks}: one logit per query head. */
        SINKS,
        /** The norm before the FFN is {@code post_attention_norm}, not {@code ffn_norm}. */
        POST_ATTENTION_NORM,
        /** {@code ffn_gate_inp.bias} and {@code ffn_gate/up/down_exps.bias}. */
        EXPERT_BIASES,
        /** {@code attention.sliding_window} on llama.cpp's pattern of the architecture. */
        SLIDING_WINDOW,
        /** One trailing NextN block ({@code nextn_predict_layers} 1, {@code blk.N.nextn.*}). */
        NEXTN_BLOCK,
        /** {@code attn_q_norm}/{@code attn_k_norm} span all query/key heads instead of one head. */
        WHOLE_QK_NORM,
        /** Gated DeltaNet blocks ({@code ssm.*}), output-gated queries, a gated shared expert (needs {@code deltaNet}). */
        DELTA_NET,
        /** The DeltaNet's value heads grouped by key head: {@code ssm_ba} for {@code ssm_beta}, {@code ssm_alpha}. */
        GROUPED_DELTA_NET
    }

    private final String ggufName;
    private final boolean qkNorm;
    private final boolean mla;
    private final boolean allowsMoe;
    private final boolean requiresMoe;
    private final Set<Feature> features;

    ArchitectureTraits(String ggufName, boolean qkNorm, boolean mla, boolean allowsMoe, boolean requiresMoe,
                 Feature... features) {
        this.ggufName = ggufName;
        this.qkNorm = qkNorm;
        this.mla = mla;
        this.allowsMoe = allowsMoe;
        this.requiresMoe = requiresMoe;
        this.features = features.length == 0 ? EnumSet.noneOf(Feature.class) : EnumSet.copyOf(Arrays.asList(features));
    }

    /** {@code general.architecture}, also the prefix of the architecture's metadata keys. */
    public String ggufName() {
        return ggufName;
    }

    public boolean qkNorm() {
        return qkNorm;
    }

    public boolean mla() {
        return mla;
    }

    public boolean allowsMoe() {
        return allowsMoe;
    }

    public boolean requiresMoe() {
        return requiresMoe;
    }

    public boolean has(Feature feature) {
        return features.contains(feature);
    }

    /** Whether routed experts may have deepseek2's extras (leading dense layers, shared experts, sigmoid, bias). */
    boolean allowsDeepseekRouting() {
        return this == DEEPSEEK2 || sparseAttention() || this == GLM4MOE;
    }

    /** DeepSeek Sparse Attention: latent attention with a lightning indexer ({@link SyntheticModels.Mla#indexer}). */
    public boolean sparseAttention() {
        return this == DEEPSEEK32 || this == GLM_DSA;
    }

    public static ArchitectureTraits of(String ggufName) {
        return Arrays.stream(values()).filter(a -> a.ggufName.equals(ggufName)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unsupported architecture '" + ggufName
                        + "' (" + Arrays.stream(values()).map(ArchitectureTraits::ggufName).toList() + ")"));
    }
}
