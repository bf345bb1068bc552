package dev.lazarus.kt.runtime;

/**
 * The caller's side of one generating sequence. All methods are called from engine threads, one at
 * a time per sequence; they must be quick and must not block (hand tokens to a stream and return).
 */
public interface SequenceListener {

    /**
     * The sequence got a slot and its cache; {@code reusedPromptTokens} leading prompt tokens came
     * from the prefix cache and will not be computed. Called before any other method.
     */
    default void admitted(int reusedPromptTokens) {
    }

    /**
     * A step fed a chunk of the prompt and the rest is still to come: {@code processed} of its {@code total} tokens
     * are in the cache (those from the prefix cache included). Not called for the step that ends the prompt, which
     * picks the first token instead.
     */
    default void prefilled(int processed, int total) {
    }

    /** Chooses the next token from the logits that followed the last fed token; may modify the array. */
    int select(float[] logits);

    /** Receives the chosen token; returns whether to go on generating (false: the sequence ends as {@link EndReason#STOPPED}). */
    boolean accept(int token);

    /**
     * Tokens the sequence may still generate ({@code max_tokens} left), so that speculative decoding drafts no token
     * that could never be emitted; unbounded by default.
     */
    default int tokensLeft() {
        return Integer.MAX_VALUE;
    }

    /** The sequence ended normally or was cancelled. Exactly one of this and {@link #failed} is called, once. */
    void ended(EndReason reason);

    /** The engine failed while computing this sequence. */
    void failed(Throwable error);
}
