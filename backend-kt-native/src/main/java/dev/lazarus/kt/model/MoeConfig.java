package dev.lazarus.kt.model;

/**
 * Mixture-of-experts parameters.
 *
 * @param expertCount        routed experts per MoE layer
 * @param expertsUsed        experts chosen per token
 * @param expertFfnLength    hidden size of one routed expert
 * @param sharedFfnLength    hidden size of the shared expert(s), 0 when there is none
 * @param leadingDenseBlocks the first blocks use a dense FFN instead (deepseek2)
 * @param gating             how router logits become probabilities
 * @param normalizeWeights   divide the chosen experts' weights by their sum
 * @param weightsScale       multiply the weights by this (deepseek's routed scaling factor); 0 or 1: none
 * @param groupCount         expert groups for group-limited routing (1: none)
 * @param groupsUsed         groups kept per token
 */
public record MoeConfig(
        int expertCount,
        int expertsUsed,
        int expertFfnLength,
        int sharedFfnLength,
        int leadingDenseBlocks,
        Gating gating,
        boolean normalizeWeights,
        float weightsScale,
        int groupCount,
        int groupsUsed) {

    public enum Gating { SOFTMAX, SIGMOID }

    public MoeConfig {
        if (expertsUsed <= 0 || expertsUsed > expertCount) {
            throw new ModelFormatException("expert_used_count " + expertsUsed + " must be in 1.." + expertCount);
        }
        if (groupCount > 1 && (expertCount % groupCount != 0 || groupsUsed < 1 || groupsUsed > groupCount)) {
            throw new ModelFormatException("expert groups " + groupsUsed + "/" + groupCount + " do not divide "
                    + expertCount + " experts");
        }
    }

    static MoeConfig fromMetadata(Metadata md, Architecture arch, int denseFfnLength) {
        int experts = md.integer("expert_count", 0);
        if (experts == 0) {
            return null;
        }
        int used = md.requireInt("expert_used_count");
        int expertFfn = md.integer("expert_feed_forward_length", denseFfnLength);
        int shared = md.integer("expert_shared_count", 0);
        int sharedFfn = md.integer("expert_shared_feed_forward_length", shared * expertFfn);
        // ggml ids: 1 softmax, 2 sigmoid; absent means softmax (older deepseek-v2 files).
        Gating gating = md.integer("expert_gating_func", 1) == 2 ? Gating.SIGMOID : Gating.SOFTMAX;
        boolean normalize = arch.alwaysNormalizesExpertWeights() || md.bool("expert_weights_norm", false);
        return new MoeConfig(experts, used, expertFfn, sharedFfn, md.integer("leading_dense_block_count", 0), gating,
                normalize, md.real("expert_weights_scale", 0f), Math.max(1, md.integer("expert_group_count", 1)),
                md.integer("expert_group_used_count", 1));
    }

    public boolean isMoeBlock(int layer) {
        return layer >= leadingDenseBlocks;
    }
}
