package dev.lazarus.gateway.policy.gate;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * How closely the candidate computes what the oracle computes, teacher-forced on the oracle's
 * greedy path over the gate's prompts: at every position both see the same conversation (the
 * prompt, then the oracle's own greedy answer so far as a trailing assistant message), and the
 * candidate's most likely next token is compared with the oracle's.
 *
 * @param measured            whether it could be measured; when not, {@code reason} says why
 * @param reason              why not, or null
 * @param positions           positions scored over all prompts
 * @param top1Agreement       fraction of positions where the candidate's most likely token is the oracle's greedy one
 * @param meanAbsLogprobDelta mean |Δ logprob| over the oracle's top-5 tokens that the candidate also lists
 * @param maxAbsLogprobDelta  the largest such |Δ logprob|
 * @param firstDivergence     the earliest position (within its prompt, 0-based) where the top-1 tokens differ;
 *                            null when they never do
 * @param prompts             the same per prompt
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record OracleAgreement(boolean measured, String reason, int positions,
                              @JsonProperty("top1_agreement") Double top1Agreement,
                              @JsonProperty("mean_abs_logprob_delta") Double meanAbsLogprobDelta,
                              @JsonProperty("max_abs_logprob_delta") Double maxAbsLogprobDelta,
                              @JsonProperty("first_divergence") Integer firstDivergence,
                              List<PromptAgreement> prompts) {

    /**
     * @param oracleText the oracle's greedy answer the positions were forced along
     * @param agreed     positions where the top-1 tokens are the same
     * @param deltas     compared logprob pairs (the mean's denominator)
     * @param note       why the path ended before the configured number of tokens, or null
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record PromptAgreement(String prompt, @JsonProperty("oracle_text") String oracleText, int positions,
                                  int agreed, @JsonProperty("first_divergence") Integer firstDivergence,
                                  @JsonProperty("mean_abs_logprob_delta") Double meanAbsLogprobDelta,
                                  @JsonProperty("max_abs_logprob_delta") Double maxAbsLogprobDelta,
                                  int deltas, String note) {}

    public static OracleAgreement notMeasured(String reason) {
        return new OracleAgreement(false, reason, 0, null, null, null, null, List.of());
    }

    /** Sums the prompts; not measured when no position could be scored. */
    public static OracleAgreement of(List<PromptAgreement> prompts) {
        int positions = 0;
        int agreed = 0;
        int deltas = 0;
        double deltaSum = 0;
        double deltaMax = 0;
        Integer first = null;
        for (PromptAgreement p : prompts) {
            positions += p.positions();
            agreed += p.agreed();
            if (p.deltas() > 0) {
                deltas += p.deltas();
                deltaSum += p.meanAbsLogprobDelta() * p.deltas();
                deltaMax = Math.max(deltaMax, p.maxAbsLogprobDelta());
            }
            if (p.firstDivergence() != null && (first == null || p.firstDivergence() < first)) {
                first = p.firstDivergence();
            }
        }
        if (positions == 0) {
            return new OracleAgreement(false, "no position could be scored", 0, null, null, null, null,
                    List.copyOf(prompts));
        }
        return new OracleAgreement(true, null, positions, (double) agreed / positions,
                deltas == 0 ? null : deltaSum / deltas, deltas == 0 ? null : deltaMax, first, List.copyOf(prompts));
    }
}
