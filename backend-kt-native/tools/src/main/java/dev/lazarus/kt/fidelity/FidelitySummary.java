package dev.lazarus.kt.fidelity;

import java.util.List;

/**
 * The rows of a {@link FidelityReport} pooled: agreement over all positions of all prompts (not a mean of
 * per-prompt fractions, so long and short prompts count by their tokens), deltas over all compared candidates.
 *
 * @param firstDivergence       the earliest divergence position of any prompt, {@link PromptFidelity#NONE} if none
 * @param divergedPrompts       how many prompts diverged (teacher-forced)
 * @param freeRunningDivergence the earliest free-running divergence, {@link PromptFidelity#NONE} if none,
 *                              {@link PromptFidelity#NOT_MEASURED} if not run
 */
public record FidelitySummary(int prompts, int positions, int agreed, int comparedLogprobs, double maxDelta,
                              double meanDelta, int firstDivergence, int divergedPrompts, int freeRunningDivergence) {

    public double top1Agreement() {
        return positions == 0 ? 1 : (double) agreed / positions;
    }

    static FidelitySummary of(List<PromptFidelity> rows) {
        int positions = 0;
        int agreed = 0;
        int compared = 0;
        double max = 0;
        double sum = 0;
        int first = PromptFidelity.NONE;
        int diverged = 0;
        int freeRunning = rows.isEmpty() ? PromptFidelity.NOT_MEASURED : PromptFidelity.NONE;
        for (PromptFidelity row : rows) {
            positions += row.positions();
            agreed += row.agreed();
            compared += row.comparedLogprobs();
            max = Math.max(max, row.maxDelta());
            sum += row.meanDelta() * row.comparedLogprobs();
            if (row.diverged()) {
                diverged++;
                first = earliest(first, row.firstDivergence());
            }
            freeRunning = row.freeRunningDivergence() == PromptFidelity.NOT_MEASURED || freeRunning == PromptFidelity.NOT_MEASURED
                    ? PromptFidelity.NOT_MEASURED : earliest(freeRunning, row.freeRunningDivergence());
        }
        return new FidelitySummary(rows.size(), positions, agreed, compared, max, compared == 0 ? 0 : sum / compared,
                first, diverged, freeRunning);
    }

    /** The earlier of two divergence positions, where {@link PromptFidelity#NONE} is later than any. */
    private static int earliest(int a, int b) {
        if (a == PromptFidelity.NONE) {
            return b;
        }
        return b == PromptFidelity.NONE ? a : Math.min(a, b);
    }
}
