package dev.lazarus.kt.model;

import dev.lazarus.kt.gguf.GgufTensorInfo;

/**
 * What one transformer block is made of, read once from the GGUF by {@link ModelAssembler}: its norms, which
 * attention with which weights, and which feed-forward (a dense SwiGLU, or routed experts with an optional shared
 * expert). The CPU blocks are assembled from it and the GPU layer path uploads from it, so the two cannot disagree
 * on a block's shape. Optional tensors are null.
 *
 * @param index    the block's number ({@code blk.N})
 * @param attnNorm the norm before attention
 * @param attention grouped-query ({@link Gqa}), latent ({@link Mla}) or gated DeltaNet ({@link DeltaNet}) attention
 * @param ffnNorm  the norm before the feed-forward half ({@code ffn_norm} or {@code post_attention_norm})
 * @param dense    the dense SwiGLU FFN; null in a routed-experts block
 * @param experts  the routed experts; null in a dense block
 */
public record BlockTensors(int index, GgufTensorInfo attnNorm, AttentionTensors attention, GgufTensorInfo ffnNorm,
                           SwiGluTensors dense, Experts experts) {

    public BlockTensors {
        if ((dense == null) == (experts == null)) {
            throw new IllegalArgumentException("block " + index + " needs exactly one of a dense FFN and experts");
        }
    }

    /** Whether this block routes to experts (leading dense blocks of deepseek2 and glm4moe do not). */
    public boolean hasExperts() {
        return experts != null;
    }

    /** Which attention a block has, with its weights. */
    public sealed interface AttentionTensors permits Gqa, Mla, DeltaNet {}

    /** Grouped-query attention: q, k, v, output; optional biases, QK-norm weights and sinks (gpt-oss). */
    public record Gqa(GgufTensorInfo q, GgufTensorInfo k, GgufTensorInfo v, GgufTensorInfo output,
                      GgufTensorInfo qBias, GgufTensorInfo kBias, GgufTensorInfo vBias, GgufTensorInfo outputBias,
                      GgufTensorInfo qNorm, GgufTensorInfo kNorm, GgufTensorInfo sinks) implements AttentionTensors {}

    /**
     * deepseek2's latent attention. Queries by one {@code q} or by the LoRA {@code qA}, {@code qANorm}, {@code qB};
     * the latent decompressed by split per-head {@code kB}/{@code vB} or by one fused {@code kvB}; deepseek32's
     * lightning {@code indexer}, or null.
     */
    public record Mla(GgufTensorInfo q, GgufTensorInfo qA, GgufTensorInfo qANorm, GgufTensorInfo qB,
                      GgufTensorInfo kvAMqa, GgufTensorInfo kvANorm, GgufTensorInfo kB, GgufTensorInfo vB,
                      GgufTensorInfo kvB, GgufTensorInfo output, Indexer indexer) implements AttentionTensors {

        /** Without an indexer (deepseek2). */
        public Mla(GgufTensorInfo q, GgufTensorInfo qA, GgufTensorInfo qANorm, GgufTensorInfo qB,
                   GgufTensorInfo kvAMqa, GgufTensorInfo kvANorm, GgufTensorInfo kB, GgufTensorInfo vB,
                   GgufTensorInfo kvB, GgufTensorInfo output) {
            this(q, qA, qANorm, qB, kvAMqa, kvANorm, kB, vB, kvB, output, null);
        }

        public boolean queryLora() {
            return q == null;
        }

        public boolean splitKvB() {
            return kvB == null;
        }
    }

    /**
     * qwen35moe's and qwen3next's linear attention: the joint query/key/value projection {@code qkv} and the output
     * gate {@code gate} (z), the causal convolution {@code conv} ({@code [kernel, channels]}), the decay's bias
     * {@code dtBias} and factor {@code a} ({@code -exp(A_log)}), the projections of beta and alpha (qwen3next: one
     * {@code ssm_ba} as {@code beta}, {@code alpha} null; older qwen3next GGUFs: the fused {@code ssm_in} as {@code qkv},
     * {@code gate} null), the per-head norm and the output.
     */
    public record DeltaNet(GgufTensorInfo qkv, GgufTensorInfo gate, GgufTensorInfo conv, GgufTensorInfo dtBias,
                           GgufTensorInfo a, GgufTensorInfo beta, GgufTensorInfo alpha, GgufTensorInfo norm,
                           GgufTensorInfo output) implements AttentionTensors {}

    /**
     * deepseek32's lightning indexer ({@code blk.N.indexer.*}): query heads from the compressed query
     * ({@code attn_q_b}), one key from the block input ({@code attn_k}) layer-normed with {@code kNorm} and
     * {@code kNormBias}, and the per-head weights ({@code proj}).
     */
    public record Indexer(GgufTensorInfo qB, GgufTensorInfo k, GgufTensorInfo kNorm, GgufTensorInfo kNormBias,
                          GgufTensorInfo proj) {}

    /** A SwiGLU network: {@code gate}, {@code up}: hidden × dim; {@code down}: dim × hidden. */
    public record SwiGluTensors(GgufTensorInfo gate, GgufTensorInfo up, GgufTensorInfo down) {}

    /**
     * Routed experts: the router and its optional logit bias (gpt-oss) and selection bias ({@code exp_probs_b},
     * deepseek2/glm4moe), the experts' 3-D gate/up/down tensors and their optional per-expert biases (gpt-oss),
     * and the shared expert or null, with its optional sigmoid gate ({@code ffn_gate_inp_shexp}, qwen35moe).
     */
    public record Experts(GgufTensorInfo router, GgufTensorInfo routerBias, GgufTensorInfo selectionBias,
                          SwiGluTensors routed, GgufTensorInfo gateBias, GgufTensorInfo upBias,
                          GgufTensorInfo downBias, SwiGluTensors shared, GgufTensorInfo sharedGate) {}
}
