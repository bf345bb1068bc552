package dev.lazarus.kt.placement;

import dev.lazarus.kt.model.SwiGlu;

/**
 * The experts one MoE block computes with, each retained in its current tier until {@link #close}: a
 * swap meanwhile publishes a successor but frees nothing still in use. Taking the checkout records each
 * tier's bytes read. Used by the tiered executor and by the GPU layer path,
 * which closes it only once the device has finished the token (its kernels read the experts until then).
 */
public final class ExpertCheckout implements AutoCloseable {

    private final PlacedExpert[] placed;

    /** {@code counters} null: nothing counted now (a whole block's experts, counted once routed: {@link #count}). */
    ExpertCheckout(ExpertSlots slots, int slot, int[] experts, TierCounters counters) {
        placed = new PlacedExpert[experts.length];
        try {
            for (int j = 0; j < experts.length; j++) {
                placed[j] = slots.acquire(slot, experts[j]);
                if (counters != null) {
                    counters.record(placed[j].tier(), placed[j].bytes());
                }
            }
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    public int size() {
        return placed.length;
    }

    public Tier tier(int j) {
        return placed[j].tier();
    }

    /** The device copy of expert {@code j} (its tier is {@link Tier#GPU}). */
    public DeviceTier.Resident device(int j) {
        return placed[j].device();
    }

    /** The CPU form of expert {@code j} (RAM copy or mapped file). */
    public SwiGlu.Weights cpu(int j) {
        return placed[j].cpu();
    }

    /** Records expert {@code j}'s bytes as read from its tier. */
    void count(int j, TierCounters counters) {
        counters.record(placed[j].tier(), placed[j].bytes());
    }

    @Override
    public void close() {
        for (int j = 0; j < placed.length; j++) {
            if (placed[j] != null) {
                placed[j].release();
                placed[j] = null;
            }
        }
    }
}
