package dev.lazarus.kt.gpu;

/**
 * Where a hybrid token of the GPU layer path spends its host time ({@code -Dlazarus.kt.gpu.profile=true}, read once;
 * off, it costs a branch): per token the time from {@link DeviceMoe#begin} to {@link DeviceMoe#finish}, and in it the
 * waits for each block's routes (the GPU's attention and router, plus the host's own launches before them), the CPU
 * experts' pool calls, and the rest (launches, copies, the final sync). Benchmarks print it
 * ({@link GpuDecodeBenchmark}); single-threaded like the layer path.
 */
final class HybridProfile {

    static final boolean ON = Boolean.getBoolean("lazarus.kt.gpu.profile");

    private static long tokens, tokenNs, waitNs, cpuNs, blocks, cpuExperts, tokenStart;

    private HybridProfile() {}

    static void tokenStarted() {
        tokenStart = System.nanoTime();
    }

    static void tokenEnded() {
        tokens++;
        tokenNs += System.nanoTime() - tokenStart;
    }

    static void block(long waitNanos, long cpuNanos, int experts) {
        blocks++;
        waitNs += waitNanos;
        cpuNs += cpuNanos;
        cpuExperts += experts;
    }

    static void reset() {
        tokens = tokenNs = waitNs = cpuNs = blocks = cpuExperts = 0;
    }

    /** Per token in microseconds: total, route waits, CPU experts, the rest; blocks with CPU work and experts per block. */
    static String report() {
        if (tokens == 0) {
            return "hybrid profile: no tokens";
        }
        double t = tokens;
        return String.format("hybrid profile, per token (%d tokens): %.0f us = route waits %.0f + CPU experts %.0f + rest %.0f;"
                        + " %.1f blocks with CPU experts, %.2f CPU experts each", tokens, tokenNs / t / 1e3, waitNs / t / 1e3,
                cpuNs / t / 1e3, (tokenNs - waitNs - cpuNs) / t / 1e3, blocks / t, blocks == 0 ? 0 : (double) cpuExperts / blocks);
    }
}
