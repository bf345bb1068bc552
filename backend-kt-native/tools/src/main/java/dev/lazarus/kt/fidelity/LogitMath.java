package dev.lazarus.kt.fidelity;

import java.util.Set;

/** The arithmetic on one position's logits that both sides of a comparison must agree on. */
public final class LogitMath {

    private LogitMath() {
    }

    /** Natural-log softmax in double, so the engine side adds no rounding of its own to the comparison. */
    public static double[] logSoftmax(float[] logits) {
        double max = Double.NEGATIVE_INFINITY;
        for (float l : logits) {
            max = Math.max(max, l);
        }
        double sum = 0;
        for (float l : logits) {
            sum += Math.exp(l - max);
        }
        double log = Math.log(sum) + max;
        double[] out = new double[logits.length];
        for (int i = 0; i < logits.length; i++) {
            out[i] = logits[i] - log;
        }
        return out;
    }

    /** The greedy choice: the highest logit outside {@code banned}, ties to the lower id like an argmax scan. */
    static int argmax(float[] logits, Set<Integer> banned) {
        int best = -1;
        for (int id = 0; id < logits.length; id++) {
            if ((best < 0 || logits[id] > logits[best]) && !banned.contains(id)) {
                best = id;
            }
        }
        return best;
    }

    /** The same choice on log-probabilities (which keep the logits' order). */
    static int argmax(double[] logprobs, Set<Integer> banned) {
        int best = -1;
        for (int id = 0; id < logprobs.length; id++) {
            if ((best < 0 || logprobs[id] > logprobs[best]) && !banned.contains(id)) {
                best = id;
            }
        }
        return best;
    }
}
