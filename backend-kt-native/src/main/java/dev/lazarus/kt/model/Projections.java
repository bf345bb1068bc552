package dev.lazarus.kt.model;

import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.Parallel;
import dev.lazarus.kt.tensor.WeightMatrix;

/**
 * Applies weight matrices to a batch of activation vectors. Every weight row is read once per
 * call for all vectors ({@link WeightMatrix#matmul}); several matrices that read the same input
 * (Q, K, V) share one parallel pass.
 */
final class Projections {

    /**
     * Products of at most this many weights × vectors run on the calling thread: a MoE router (32 × 1024 in the
     * bench model, a few microseconds) costs less than handing a parallel pass to the pool and waiting for it.
     */
    static final long SERIAL_WORK = 1 << 16;

    private Projections() {}

    static float[][] apply(Parallel parallel, WeightMatrix w, float[][] xs) {
        return applyAll(parallel, new WeightMatrix[] {w}, xs)[0];
    }

    /** {@code result[m][i] = ws[m] · xs[i]}. */
    static float[][][] applyAll(Parallel parallel, WeightMatrix[] ws, float[][] xs) {
        float[][][] outs = new float[ws.length][xs.length][];
        int[] rows = new int[ws.length];
        for (int m = 0; m < ws.length; m++) {
            rows[m] = ws[m].rows();
            for (int i = 0; i < xs.length; i++) {
                outs[m][i] = new float[rows[m]];
            }
        }
        // each activation is converted once here, not once per row chunk
        Activation[][] as = new Activation[ws.length][];
        for (int m = 0; m < ws.length; m++) {
            for (int o = 0; o < m && as[m] == null; o++) {
                if (ws[o].vecDotType() == ws[m].vecDotType() && ws[o].cols() == ws[m].cols()) {
                    as[m] = as[o];
                }
            }
            if (as[m] == null) {
                as[m] = Activation.convertAll(parallel, ws[m].vecDotType(), xs, ws[m].cols());
            }
        }
        long work = 0;
        for (int m = 0; m < ws.length; m++) {
            work += (long) rows[m] * ws[m].cols() * xs.length;
        }
        if (work <= SERIAL_WORK) {
            for (int m = 0; m < ws.length; m++) {
                ws[m].matmul(as[m], outs[m], 0, rows[m]);
            }
        } else {
            RowSplitter.run(parallel, rows, (m, from, to) -> ws[m].matmul(as[m], outs[m], from, to));
        }
        return outs;
    }
}
