package dev.lazarus.kt.model;

/** The feed-forward half of a block: dense SwiGLU or a mixture of experts. */
interface FeedForward {

    /** Returns the FFN output for each normalised input vector. */
    float[][] forward(float[][] xn);

    /** How many phases {@link #begin} has (always the same for this FFN). */
    default int phases() {
        return 1;
    }

    /** {@link #forward} as phases of the caller's pool call; by default all of it where its one phase opens. */
    default PhasedStep begin(float[][] xn) {
        return PhasedStep.inOpen(() -> forward(xn));
    }
}
