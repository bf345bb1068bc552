package dev.lazarus.kt.sampling;

/** Chooses the tokens of one sequence: the {@link Sampler}, or a script where a test needs a known answer. */
public interface TokenSampler {

    /**
     * Chooses the next token.
     *
     * @param logits the model output for the position; may be modified
     */
    Sampler.Sampled next(float[] logits);

    /** A token joins the sequence: each prompt token, then each chosen one (what the penalties look back on). */
    void accept(int token);
}
