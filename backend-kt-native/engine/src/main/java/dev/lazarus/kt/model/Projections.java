package dev.lazarus.kt.model;

import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.parallel.RowSplitter;
import dev.lazarus.kt.tensor.Activation;
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
        this(parallel, ws, xs, null, false);
    }

    /**
     * As {@link #Projections(Parallel, WeightMatrix[], float[][])}, the activations borrowed from {@code scratch}
     * (when not null), and the outputs too when {@code scratchOutputs}: then they are valid only until the scratch
     * goes back to its slot.
     */
    Projections(Parallel parallel, WeightMatrix[] ws, float[][] xs, Scratch scratch, boolean scratchOutputs) {
        this.ws = ws;
        this.outs = new float[ws.length][][];
        this.as = new Activation[ws.length][];
        int[] rowsPerMatrix = new int[ws.length];
        long w = 0;
        for (int m = 0; m < ws.length; m++) {
            rowsPerMatrix[m] = ws[m].rows();
            w += (long) ws[m].rows() * ws[m].cols() * xs.length;
            // every output row is written by run(), so borrowed vectors need no clearing
            outs[m] = scratchOutputs ? scratch.floats(xs.length, rowsPerMatrix[m]) : new float[xs.length][rowsPerMatrix[m]];
            for (int o = 0; o < m && as[m] == null; o++) {
                if (ws[o].vecDotType() == ws[m].vecDotType() && ws[o].cols() == ws[m].cols()) {
                    as[m] = as[o];
                }
            }
            if (as[m] == null) {
                as[m] = scratch != null ? scratch.convert(parallel, ws[m].vecDotType(), xs, ws[m].cols())
                        : Activation.convertAll(parallel, ws[m].vecDotType(), xs, ws[m].cols());
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
        return new Projections(parallel, ws, xs).run(parallel);
    }

    /** Runs every row (on the pool unless the work is small) and returns {@link #outputs()}. */
    float[][][] run(Parallel parallel) {
        if (work <= SERIAL_WORK) {
            run(0, rows());
        } else {
            parallel.forRange(rows(), rows.grain(), this::run);
        }
        return outputs();
    }

    /** Rows per chunk boundary when the rows are split ({@link RowSplitter#grain()}). */
    int grain() {
        return rows.grain();
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
