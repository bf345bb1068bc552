package dev.lazarus.kt.speculative;

/**
 * Proposes tokens that may follow a sequence, for the main model to verify in one forward pass (speculative
 * decoding). A draft never changes what is generated: every proposed token is checked against the main model's
 * own choice at its position, so a bad draft costs only the verification of the positions after it.
 */
public interface Drafter extends AutoCloseable {

    /** A drafter's state for one sequence (a draft model's cache of it); used by the engine thread only. */
    interface Session extends AutoCloseable {

        /**
         * Up to {@code max} tokens that may follow {@code tokens[0..length)}, whose last token was just chosen (the
         * main model has not computed it yet); empty when nothing worth verifying comes to mind.
         */
        int[] propose(int[] tokens, int length, int max);

        /**
         * The main model computed {@code tokens[from, to)} at {@code positions[from, to)} of this sequence (verified
         * or not), with their final hidden states; called only where {@link #wantsHiddenStates()}.
         */
        default void computed(int[] tokens, int[] positions, float[][] hidden, int from, int to) {
        }

        /** Frees what the session holds (the sequence ended). */
        @Override
        default void close() {
        }
    }

    /** The state for a new sequence. */
    Session open();

    /** Most tokens one proposal holds: the engine verifies at most this many positions after the chosen token. */
    int maxDraft();

    /** Proposals shorter than this are not verified (llama-server's {@code --spec-draft-n-min}). */
    default int minDraft() {
        return 0;
    }

    /** Whether sessions want the main model's hidden states of every computed token ({@link Session#computed}). */
    default boolean wantsHiddenStates() {
        return false;
    }

    /** The drafter's own name for {@code /v1/models}: llama-server's {@code --spec-type} value. */
    String type();

    @Override
    default void close() {
    }
}
