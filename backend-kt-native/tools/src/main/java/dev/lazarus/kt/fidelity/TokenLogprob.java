package dev.lazarus.kt.fidelity;

/** One candidate token and its natural-log probability under the model's full (raw, unbiased) softmax. */
public record TokenLogprob(int id, double logprob) {
    @Override
    public String toString() {
        return "%d:%.4f".formatted(id, logprob);
    }
}
