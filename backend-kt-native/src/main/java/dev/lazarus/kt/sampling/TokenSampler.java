package dev.lazarus.kt.sampling;

/** Chooses the tokens of one sequence: the {@link Sampler}, or a script where a test needs a known answer. */
public interface TokenSampler {

    /**
     * Chooses the next token.
     *
     * @param logits  the model output for the position; may be modified
     * @param history tokens generated so far in this sequence
     */
    Sampler.Sampled next(float[] logits, IntList history);
}
