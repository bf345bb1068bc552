package dev.lazarus.kt.placement;

import dev.lazarus.kt.model.ExpertExecutor;
import dev.lazarus.kt.model.SwiGlu;
import dev.lazarus.kt.parallel.Parallel;

/**
 * The {@link ExpertExecutor} under placement: for one MoE block, the experts placed on the GPU are
 * launched asynchronously first, the CPU computes the RAM and memory-mapped ones meanwhile, then the
 * GPU results are collected. Every expert used is retained for the duration, so a concurrent swap
 * cannot free it underneath; per-tier byte counts are recorded on the way (the model counts the
 * routing itself).
 */
final class TieredExperts implements ExpertExecutor {

    private final ExpertCatalog catalog;
    private final ExpertSlots slots;
    private final DeviceTier device;
    private final Parallel parallel;
    private final TierCounters counters;

    TieredExperts(ExpertCatalog catalog, ExpertSlots slots, DeviceTier device, Parallel parallel,
                  TierCounters counters) {
        this.catalog = catalog;
        this.slots = slots;
        this.device = device;
        this.parallel = parallel;
        this.counters = counters;
    }

    @Override
    public float[][][] apply(int layer, int[] experts, float[][][] inputs) {
        int jobs = experts.length;
        try (ExpertCheckout placed = new ExpertCheckout(slots, catalog.slotOf(layer), experts, counters)) {
            int onDevice = 0;
            for (int j = 0; j < jobs; j++) {
                onDevice += placed.tier(j) == Tier.GPU ? 1 : 0;
            }
            DeviceTier.Resident[] residents = new DeviceTier.Resident[onDevice];
            float[][][] deviceInputs = new float[onDevice][][];
            SwiGlu.Weights[] nets = new SwiGlu.Weights[jobs - onDevice];
            float[][][] cpuInputs = new float[jobs - onDevice][][];
            for (int j = 0, d = 0, c = 0; j < jobs; j++) {
                if (placed.tier(j) == Tier.GPU) {
                    residents[d] = placed.device(j);
                    deviceInputs[d++] = inputs[j];
                } else {
                    nets[c] = placed.cpu(j);
                    cpuInputs[c++] = inputs[j];
                }
            }
            DeviceTier.Pending pending = onDevice > 0 ? device.submit(residents, deviceInputs) : null;
            float[][][] cpuOut;
            try {
                cpuOut = nets.length > 0 ? SwiGlu.apply(parallel, nets, cpuInputs) : new float[0][][];
            } catch (RuntimeException | Error e) {
                // the device may still read its experts: wait for it before the checkout releases them
                awaitQuietly(pending, e);
                throw e;
            }
            float[][][] deviceOut = pending != null ? pending.await() : new float[0][][];
            float[][][] out = new float[jobs][][];
            for (int j = 0, d = 0, c = 0; j < jobs; j++) {
                out[j] = placed.tier(j) == Tier.GPU ? deviceOut[d++] : cpuOut[c++];
            }
            return out;
        }
    }

    private static void awaitQuietly(DeviceTier.Pending pending, Throwable cause) {
        if (pending != null) {
            try {
                pending.await();
            } catch (RuntimeException | Error e) {
                cause.addSuppressed(e);
            }
        }
    }
}
