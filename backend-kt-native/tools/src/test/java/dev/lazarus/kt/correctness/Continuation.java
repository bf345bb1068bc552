package dev.lazarus.kt.correctness;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A greedy continuation as one implementation produced it: the chosen token ids and, at each step, the
 * log-probabilities of the raw (unbiased, untempered) next-token distribution for the best candidates.
 * {@code top} entries may be null where an implementation does not report a step;
 * {@code distributions} holds the whole distribution of every step where it is known (the engine), else null.
 */
record Continuation(int[] tokens, List<List<Candidate>> top, double[][] distributions) {

    /** One candidate token and its natural-log probability under the model's full softmax. */
    record Candidate(int id, double logprob) {
        @Override
        public String toString() {
            return "%d:%.4f".formatted(id, logprob);
        }
    }

    /** First step where the chosen tokens differ, or -1 when they are identical. */
    int firstDivergence(Continuation other) {
        int n = Math.min(tokens.length, other.tokens.length);
        for (int i = 0; i < n; i++) {
            if (tokens[i] != other.tokens[i]) {
                return i;
            }
        }
        return tokens.length == other.tokens.length ? -1 : n;
    }

    static String describe(List<Candidate> candidates) {
        return candidates == null ? "(not reported)" :  candidates.stream().map(Candidate::toString).collect(Collectors.joining(", ", "[", "]"));
    }

    static Set<Integer> ids(List<Candidate> candidates) {
        return candidates.stream().map(Candidate::id).collect(Collectors.toSet());
    }
}
