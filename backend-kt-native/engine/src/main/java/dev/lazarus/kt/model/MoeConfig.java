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

    /**
     * How router logits become expert weights: softmax over all experts, sigmoid per expert, or (gpt-oss) top-k on
     * the raw logits and a softmax over the chosen ones only.
     */
    public enum Gating { SOFTMAX, SIGMOID, SOFTMAX_WEIGHT }

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
        Gating gating = gating(md, arch);
        boolean normalize = arch.alwaysNormalizesExpertWeights() || md.bool("expert_weights_norm", false);
        return new MoeConfig(experts, used, expertFfn, sharedFfn, md.integer("leading_dense_block_count", 0), gating,
                normalize, arch == Architecture.MINIMAX_M2 ? 0f : md.real("expert_weights_scale", 0f),
                Math.max(1, md.integer("expert_group_count", 1)),
                md.integer("expert_group_used_count", 1));
    }

    /**
     * llama.cpp's ids: 1 softmax, 2 sigmoid, 3 softmax of the chosen weights; absent (or 0) means the
     * architecture's default (softmax for older deepseek-v2 files, sigmoid for glm4moe and minimax-m2, whose
     * converter always writes it). gpt-oss's graph fixes its own.
     */
    private static Gating gating(Metadata md, Architecture arch) {
        if (arch == Architecture.GPT_OSS) {
            return Gating.SOFTMAX_WEIGHT;
        }
        return switch (md.integer("expert_gating_func", 0)) {
            case 1 -> Gating.SOFTMAX;
            case 2 -> Gating.SIGMOID;
            case 3 -> Gating.SOFTMAX_WEIGHT;
            default -> arch.defaultGating();
        };
    }

    public boolean isMoeBlock(int layer) {
        return layer >= leadingDenseBlocks;
    }
}
