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

    private final WeightMatrix[] ws;
    private final Activation[][] as;
    private final float[][][] outs;
    private final RowSplitter rows;
    private final long work;

    /**
     * The products {@code ws[m] · xs[i]}, ready to run by rows: outputs allocated, each activation converted
     * once here (not once per row chunk) and shared by the matrices of one vec-dot type and width.
     */
    Projections(Parallel parallel, WeightMatrix[] ws, float[][] xs) {
        this.ws = ws;
        this.outs = new float[ws.length][xs.length][];
        this.as = new Activation[ws.length][];
        int[] rowsPerMatrix = new int[ws.length];
        long w = 0;
        for (int m = 0; m < ws.length; m++) {
            rowsPerMatrix[m] = ws[m].rows();
            w += (long) ws[m].rows() * ws[m].cols() * xs.length;
            for (int i = 0; i < xs.length; i++) {
                outs[m][i] = new float[rowsPerMatrix[m]];
            }
            for (int o = 0; o < m && as[m] == null; o++) {
                if (ws[o].vecDotType() == ws[m].vecDotType() && ws[o].cols() == ws[m].cols()) {
                    as[m] = as[o];
                }
            }
            if (as[m] == null) {
                as[m] = Activation.convertAll(parallel, ws[m].vecDotType(), xs, ws[m].cols());
            }
        }
        this.rows = new RowSplitter(rowsPerMatrix);
        this.work = w;
    }

    static float[][] apply(Parallel parallel, WeightMatrix w, float[][] xs) {
        return applyAll(parallel, new WeightMatrix[] {w}, xs)[0];
    }

    /** {@code result[m][i] = ws[m] · xs[i]}. */
    static float[][][] applyAll(Parallel parallel, WeightMatrix[] ws, float[][] xs) {
        Projections p = new Projections(parallel, ws, xs);
        if (p.work <= SERIAL_WORK) {
            p.run(0, p.rows());
        } else {
            parallel.forRange(p.rows(), p::run);
        }
        return p.outputs();
    }

    /** All matrices' rows, end to end. */
    int rows() {
        return rows.total();
    }

    /** Computes rows {@code [from, to)} of {@link #rows()} for every vector. */
    void run(int from, int to) {
        rows.run(from, to, (m, start, end) -> ws[m].matmul(as[m], outs[m], start, end));
    }

    /** {@code [m][i]}: matrix m times vector i (complete once every row has run). */
    float[][][] outputs() {
        return outs;
    }
}
