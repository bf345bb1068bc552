package dev.lazarus.kt.parallel;

import dev.lazarus.kt.parallel.Parallel;

/**
 * Spreads several row-parallel jobs over the worker threads in ONE parallel pass. The jobs'
 * rows are laid end to end ("virtual rows") and the pool chunks that range, so a chunk may span
 * the end of one job and the start of the next. This keeps all threads busy when a step has many
 * small products (one per routed expert) without a barrier per product.
 */
public final class RowSplitter {

    /** Computes rows {@code [rowStart, rowEnd)} of job {@code job}. */
    @FunctionalInterface
    public interface RowJob {
        void rows(int job, int rowStart, int rowEnd);
    }

    /** {@code starts[j]}: the first virtual row of job j; {@code starts[jobs]}: the total. */
    private final int[] starts;

    public RowSplitter(int[] rowsPerJob) {
        starts = new int[rowsPerJob.length + 1];
        for (int j = 0; j < rowsPerJob.length; j++) {
            starts[j + 1] = starts[j] + rowsPerJob[j];
        }
    }

    /**
     * Rows per chunk boundary: {@value #GRAIN} where every job's rows are a multiple of it, so that no chunk splits a
     * group of the native Q4_K layout (two chunks sharing a group would both compute all of it), else 1.
     */
    public static final int GRAIN = 16;

    public static void run(Parallel parallel, int[] rowsPerJob, RowJob body) {
        RowSplitter rows = new RowSplitter(rowsPerJob);
        if (rows.total() > 0) {
            parallel.forRange(rows.total(), rows.grain(), (from, to) -> rows.run(from, to, body));
        }
    }

    /** {@link #GRAIN} where the jobs' rows are all multiples of it, else 1. */
    public int grain() {
        for (int j = 0; j + 1 < starts.length; j++) {
            if ((starts[j + 1] - starts[j]) % GRAIN != 0) {
                return 1;
            }
        }
        return GRAIN;
    }

    /** All jobs' rows together. */
    public int total() {
        return starts[starts.length - 1];
    }

    /** Runs virtual rows {@code [from, to)}: the part of each job they cover, jobs in order. */
    public void run(int from, int to, RowJob body) {
        int j = 0;
        while (starts[j + 1] <= from) {
            j++;
        }
        for (int at = from; at < to; j++) {
            int end = Math.min(to, starts[j + 1]);
            if (end > at) {
                body.rows(j, at - starts[j], end - starts[j]);
            }
            at = Math.max(at, end);
        }
    }
}
