package dev.lazarus.kt.model;

import dev.lazarus.kt.tensor.Parallel;

/**
 * Spreads several row-parallel jobs over the worker threads in ONE parallel pass. The jobs'
 * rows are laid end to end ("virtual rows") and the pool chunks that range, so a chunk may span
 * the end of one job and the start of the next. This keeps all threads busy when a step has many
 * small products (one per routed expert) without a barrier per product.
 */
final class RowSplitter {

    /** Computes rows {@code [rowStart, rowEnd)} of job {@code job}. */
    @FunctionalInterface
    interface RowJob {
        void rows(int job, int rowStart, int rowEnd);
    }

    private RowSplitter() {}

    static void run(Parallel parallel, int[] rowsPerJob, RowJob body) {
        int jobs = rowsPerJob.length;
        int[] starts = new int[jobs + 1];
        for (int j = 0; j < jobs; j++) {
            starts[j + 1] = starts[j] + rowsPerJob[j];
        }
        int total = starts[jobs];
        if (total == 0) {
            return;
        }
        parallel.forRange(total, (from, to) -> {
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
        });
    }
}
