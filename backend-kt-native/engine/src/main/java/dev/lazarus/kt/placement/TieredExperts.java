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

    /**
     * {@link #begin}'s pass in a pool call of its own. A failed pass leaves its experts retained, as {@link #begin}
     * says (the device may still read them).
     */
    @Override
    public float[][][] apply(int layer, int[] experts, float[][][] inputs) {
        return begin(layer, experts, inputs).complete();
    }

    /**
     * The experts as one phase of the forward pass's pool call: the device's experts are submitted now, the CPU's
     * rows run as the phase (where a nested call of their own would leave the waiting threads to join it one by one),
     * and the pass's {@link SwiGlu.Pass#finish} collects the device's results and releases the checkout. A pass that
     * fails never finishes: its experts then stay retained (a swap never frees them), rather than be released under a
     * kernel or a device that may still read them.
     */
    @Override
    public SwiGlu.Pass begin(int layer, int[] experts, float[][][] inputs) {
        ExpertCheckout placed = new ExpertCheckout(slots, catalog.slotOf(layer), experts, counters);
        DeviceTier.Pending pending = null;
        try {
            Split split = new Split(placed, inputs);
            pending = split.submit(device);
            DeviceTier.Pending submitted = pending;
            return SwiGlu.begin(parallel, split.nets, split.cpuInputs).then(cpuOut -> {
                try (placed) {
                    return split.merge(cpuOut, submitted);
                }
            });
        } catch (RuntimeException | Error e) {
            awaitQuietly(pending, e);
            placed.close();
            throw e;
        }
    }

    /** A checkout's experts split by where they run: the device's residents and the CPU's networks, with their inputs. */
    private static final class Split {
        final ExpertCheckout placed;
        final DeviceTier.Resident[] residents;
        final float[][][] deviceInputs;
        final SwiGlu.Weights[] nets;
        final float[][][] cpuInputs;

        Split(ExpertCheckout placed, float[][][] inputs) {
            this.placed = placed;
            int jobs = placed.size();
            int onDevice = 0;
            for (int j = 0; j < jobs; j++) {
                onDevice += placed.tier(j) == Tier.GPU ? 1 : 0;
            }
            residents = new DeviceTier.Resident[onDevice];
            deviceInputs = new float[onDevice][][];
            nets = new SwiGlu.Weights[jobs - onDevice];
            cpuInputs = new float[jobs - onDevice][][];
            for (int j = 0, d = 0, c = 0; j < jobs; j++) {
                if (placed.tier(j) == Tier.GPU) {
                    residents[d] = placed.device(j);
                    deviceInputs[d++] = inputs[j];
                } else {
                    nets[c] = placed.cpu(j);
                    cpuInputs[c++] = inputs[j];
                }
            }
        }

        /** Launches the device's experts (asynchronously); null when there are none. */
        DeviceTier.Pending submit(DeviceTier device) {
            return residents.length > 0 ? device.submit(residents, deviceInputs) : null;
        }

        /** Every expert's outputs in checkout order, the device's awaited. */
        float[][][] merge(float[][][] cpuOut, DeviceTier.Pending pending) {
            float[][][] deviceOut = pending != null ? pending.await() : new float[0][][];
            float[][][] out = new float[placed.size()][][];
            for (int j = 0, d = 0, c = 0; j < out.length; j++) {
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
