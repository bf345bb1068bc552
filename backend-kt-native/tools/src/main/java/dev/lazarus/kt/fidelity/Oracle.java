package dev.lazarus.kt.fidelity;

/** The reference implementation the engine is measured against (llama-server serving the same GGUF). */
public interface Oracle {

    /**
     * Greedily continues {@code prompt} (token ids) by {@code tokens} tokens with end-of-generation tokens banned,
     * reporting the {@code topLogprobs} most probable candidates of the raw softmax at every step.
     */
    OracleContinuation greedy(int[] prompt, int tokens, int topLogprobs);

    /** Where the oracle is, for reports. */
    String describe();
}
