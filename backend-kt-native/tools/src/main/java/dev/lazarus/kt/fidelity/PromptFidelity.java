package dev.lazarus.kt.fidelity;

/**
 * One prompt's row of a {@link FidelityReport}.
 *
 * @param name                  the prompt's name
 * @param promptTokens          its length in tokens
 * @param positions             generated positions scored (the oracle's continuation length)
 * @param agreed                positions where the engine's argmax is the oracle's token
 * @param comparedLogprobs      oracle top-k candidates compared (positions where it reported some, times k)
 * @param maxDelta              largest |engine logprob − oracle logprob| over those candidates (0 when none)
 * @param meanDelta             their mean (0 when none)
 * @param firstDivergence       first position whose argmax differs from the oracle's token, {@link #NONE} if none
 * @param freeRunningDivergence first position where the engine's own greedy continuation leaves the oracle's,
 *                              {@link #NONE} if it never does, {@link #NOT_MEASURED} if it was not run
 */
public record PromptFidelity(String name, int promptTokens, int positions, int agreed, int comparedLogprobs,
                             double maxDelta, double meanDelta, int firstDivergence, int freeRunningDivergence) {

    /** A divergence position meaning "none within the compared tokens". */
    public static final int NONE = -1;
    /** The free-running divergence when it was not measured. */
    public static final int NOT_MEASURED = -2;

    /** Fraction of positions where the engine's argmax equals the oracle's token (1 for no positions). */
    public double top1Agreement() {
        return positions == 0 ? 1 : (double) agreed / positions;
    }

    public boolean diverged() {
        return firstDivergence != NONE;
    }

    PromptFidelity withFreeRunningDivergence(int position) {
        return new PromptFidelity(name, promptTokens, positions, agreed, comparedLogprobs, maxDelta, meanDelta,
                firstDivergence, position);
    }
}
