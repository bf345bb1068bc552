package dev.lazarus.kt.fidelity;

import java.util.List;

/** Scores the engine's teacher-forced logits against the oracle's continuation of one prompt. */
final class PromptScorer {

    private PromptScorer() {
    }

    /**
     * The row of one prompt, its free-running divergence {@link PromptFidelity#NOT_MEASURED}.
     *
     * @param logits the engine's logits at each position of the oracle's path (see
     *               {@link EngineProbe#teacherForcedLogits})
     */
    static PromptFidelity score(String name, int promptTokens, OracleContinuation oracle, float[][] logits) {
        int[] path = oracle.tokens();
        if (logits.length != path.length) {
            throw new IllegalArgumentException(logits.length + " positions of logits for " + path.length + " tokens");
        }
        int agreed = 0;
        int first = PromptFidelity.NONE;
        int compared = 0;
        double max = 0;
        double sum = 0;
        for (int i = 0; i < path.length; i++) {
            double[] logprobs = LogitMath.logSoftmax(logits[i]);
            if (LogitMath.argmax(logprobs, oracle.banned()) == path[i]) {
                agreed++;
            } else if (first == PromptFidelity.NONE) {
                first = i;
            }
            List<TokenLogprob> reported = oracle.top().get(i);
            if (reported == null) {
                continue;
            }
            for (TokenLogprob candidate : reported) {
                double delta = delta(logprobs[candidate.id()], candidate.logprob());
                max = Math.max(max, delta);
                sum += delta;
                compared++;
            }
        }
        return new PromptFidelity(name, promptTokens, path.length, agreed, compared, max,
                compared == 0 ? 0 : sum / compared, first, PromptFidelity.NOT_MEASURED);
    }

    /** |a − b|, where two equal infinities (a token neither side thinks possible) differ by nothing. */
    static double delta(double engine, double oracle) {
        return engine == oracle ? 0 : Math.abs(engine - oracle);
    }
}
