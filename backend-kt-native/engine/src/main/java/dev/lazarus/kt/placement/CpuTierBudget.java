package dev.lazarus.kt.placement;

import dev.lazarus.kt.model.ExpertWeights;
import dev.lazarus.kt.placement.TierBudget.CpuExperts;
import java.util.function.ToLongFunction;

/**
 * The RAM tier's default budget ({@link TierBudget.CpuTier}) for one model, decided when its placement is installed:
 * the CPU tier's experts (every expert the GPU tier does not take) are copied into the RAM tier when their copies fit,
 * memory-mapped otherwise. With a GPU tier the limit is the host's available memory less a margin: the CPU experts
 * are what bounds a hybrid decode step, and copied they decode faster than mapped (docs/benchmarks.md#kernel-findings:
 * 218 against 253 tok/s at 10 % of the expert bytes on the GPU). Without one it stays a quarter of the machine's memory, as
 * before ({@link PlacementConfig}).
 *
 * @param bytes  the RAM tier's budget in its own bytes: {@code needed}, or 0 when the experts stay mapped
 * @param needed what the CPU tier's copies take at most, whichever experts the GPU holds
 * @param limit  what they had to fit in (Long.MAX_VALUE when forced)
 * @param why    for the log: where the CPU tier's experts go and why
 */
record CpuTierBudget(long bytes, long needed, long limit, String why) {

    /** Share of the machine's memory the RAM tier takes by default without a GPU, all experts or none. */
    static final double CPU_ONLY_SHARE = 0.25;
    /** Memory kept free beside the copies with a GPU tier: KV caches, the JVM, the OS (at least 2 GiB). */
    static final double MARGIN_SHARE = 0.10;
    static final long MIN_MARGIN = 2L << 30;

    static CpuTierBudget decide(CpuExperts mode, ExpertCatalog catalog, ToLongFunction<ExpertWeights> ramBytes,
                                long gpuBytes, boolean gpu, HostMemory memory) {
        long needed = needed(catalog, ramBytes, gpuBytes);
        return switch (mode) {
            case MAPPED -> new CpuTierBudget(0, needed, 0, "memory-mapped (cpu-experts: mapped)");
            case RAM -> new CpuTierBudget(needed, needed, Long.MAX_VALUE,
                    "RAM tier (cpu-experts: ram; " + mib(needed) + " MiB of copies)");
            case AUTO -> {
                long limit = gpu ? memory.available() - Math.max(MIN_MARGIN, (long) (memory.total() * MARGIN_SHARE))
                        : (long) (memory.total() * CPU_ONLY_SHARE);
                String of = gpu ? "the host's available memory (" + mib(memory.available()) + " MiB) less a margin"
                        : "a quarter of the machine's memory";
                yield needed <= limit
                        ? new CpuTierBudget(needed, needed, limit, "RAM tier (" + mib(needed) + " MiB of copies fit in "
                                + mib(limit) + " MiB, " + of + ")")
                        : new CpuTierBudget(0, needed, limit, "memory-mapped (their copies, " + mib(needed)
                                + " MiB, would not fit in " + Math.max(0, mib(limit)) + " MiB, " + of
                                + "; cpu-experts: ram copies them anyway)");
            }
        };
    }

    /**
     * The most the CPU tier's copies can take when the GPU holds up to {@code gpuBytes} of stored expert bytes: all
     * copies less what the GPU surely holds (its budget less one expert it may leave unfilled), counted at the lowest
     * copy-to-stored ratio of any expert, so that a re-placement (dynamic) never leaves a CPU expert mapped.
     */
    static long needed(ExpertCatalog catalog, ToLongFunction<ExpertWeights> ramBytes, long gpuBytes) {
        long all = 0, largest = 0;
        double lowestRatio = Double.MAX_VALUE;
        for (int s = 0; s < catalog.layerCount(); s++) {
            for (int e = 0; e < catalog.expertsPerLayer(); e++) {
                ExpertWeights w = catalog.weights(s, e);
                long copy = ramBytes.applyAsLong(w);
                all += copy;
                largest = Math.max(largest, w.bytes());
                lowestRatio = Math.min(lowestRatio, (double) copy / Math.max(1, w.bytes()));
            }
        }
        long held = Math.max(0, Math.min(gpuBytes, catalog.totalBytes()) - largest);
        return Math.max(0, all - (long) Math.floor(held * lowestRatio));
    }

    private static long mib(long bytes) {
        return bytes >> 20;
    }
}
