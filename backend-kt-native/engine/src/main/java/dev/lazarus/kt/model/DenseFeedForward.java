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

    /** One phase: the network's hidden rows, then its output rows ({@link SwiGlu.Pass}). */
    @Override
    public PhasedStep begin(float[][] xn) {
        return new PhasedStep() {
            private SwiGlu.Pass pass;

            @Override
            public int open(int phase) {
                pass = SwiGlu.begin(parallel, weights, new float[][][] {xn});
                return pass.rows();
            }

            @Override
            public void run(int phase, int from, int to) {
                pass.run(from, to);
            }

            @Override
            public int grain(int phase) {
                return pass.grain();
            }

            @Override
            public float[][] finish() {
                return pass.finish()[0];
            }
        };
    }
}
