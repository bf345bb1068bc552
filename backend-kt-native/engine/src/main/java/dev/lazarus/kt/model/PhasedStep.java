package dev.lazarus.kt.model;

import dev.lazarus.kt.parallel.PhasedBody;
import java.util.function.Supplier;

/**
 * One half of a block (attention, feed-forward) done as phases of the forward pass's one pool call
 * ({@link dev.lazarus.kt.parallel.PhaseChain}), then its result. Every phase is opened once, in order.
 */
interface PhasedStep extends PhasedBody {

    /** The result per token, once every phase has run (called by the thread that opens what comes next). */
    float[][] finish();

    /**
     * A step of one phase without indices whose opening computes {@code result} (its own pool calls, if any, are
     * helped by the threads waiting for the next phase): for the parts that have no phases of their own.
     */
    static PhasedStep inOpen(Supplier<float[][]> result) {
        return new PhasedStep() {
            private float[][] computed;

            @Override
            public int open(int phase) {
                computed = result.get();
                return 0;
            }

            @Override
            public void run(int phase, int from, int to) {
                throw new IllegalStateException("a step computed in its opening has no indices");
            }

            @Override
            public float[][] finish() {
                return computed;
            }
        };
    }
}
