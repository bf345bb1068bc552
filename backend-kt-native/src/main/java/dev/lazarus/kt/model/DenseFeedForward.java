package dev.lazarus.kt.model;

import dev.lazarus.kt.parallel.Parallel;

/** A dense SwiGLU FFN over all tokens of the batch. */
final class DenseFeedForward implements FeedForward {

    private final SwiGlu.Weights[] weights;
    private final Parallel parallel;

    DenseFeedForward(SwiGlu.Weights weights, Parallel parallel) {
        this.weights = new SwiGlu.Weights[] {weights};
        this.parallel = parallel;
    }

    @Override
    public float[][] forward(float[][] xn) {
        return SwiGlu.apply(parallel, weights, new float[][][] {xn})[0];
    }
}
