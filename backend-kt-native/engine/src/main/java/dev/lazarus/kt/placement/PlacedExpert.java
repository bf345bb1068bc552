package dev.lazarus.kt.placement;

import dev.lazarus.kt.model.SwiGlu;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One expert in one tier: what a forward pass computes with. Reference counted so that a swap never
 * frees memory a forward pass is still reading: the placement map holds one reference, every
 * computation takes one for its duration, and the tier's copy is freed when the count reaches zero.
 */
final class PlacedExpert {

    private final Tier tier;
    private final long bytes;
    private final long heldBytes;
    private final SwiGlu.Weights cpu;
    private final DeviceTier.Resident device;
    private final Runnable free;
    private final AtomicInteger refs = new AtomicInteger(1);

    private PlacedExpert(Tier tier, long bytes, long heldBytes, SwiGlu.Weights cpu, DeviceTier.Resident device,
                         Runnable free) {
        this.tier = tier;
        this.bytes = bytes;
        this.heldBytes = heldBytes;
        this.cpu = cpu;
        this.device = device;
        this.free = free;
    }

    /**
     * An expert the CPU computes (RAM copy or mapped file): {@code bytes} of weights as stored in the file,
     * {@code heldBytes} in the tier's layout; {@code free} releases its memory.
     */
    static PlacedExpert onCpu(Tier tier, long bytes, long heldBytes, SwiGlu.Weights weights, Runnable free) {
        return new PlacedExpert(tier, bytes, heldBytes, weights, null, free);
    }

    static PlacedExpert onDevice(DeviceTier.Resident resident) {
        return new PlacedExpert(Tier.GPU, resident.bytes(), resident.bytes(), null, resident, resident::free);
    }

    /**
     * The same expert, its memory freed on {@code reclaimer} instead of on whichever thread lets go
     * last (often the forward thread, which should not wait for a device free or an arena close).
     */
    PlacedExpert freedOn(java.util.concurrent.Executor reclaimer) {
        return new PlacedExpert(tier, bytes, heldBytes, cpu, device, () -> reclaimer.execute(free));
    }

    Tier tier() {
        return tier;
    }

    /** Weight bytes as stored in the file: what one computation reads, in the same unit in every tier (hit rates). */
    long bytes() {
        return bytes;
    }

    /** The memory this copy takes in its tier (a repacked layout may be larger than the file's). */
    long heldBytes() {
        return heldBytes;
    }

    SwiGlu.Weights cpu() {
        return cpu;
    }

    DeviceTier.Resident device() {
        return device;
    }

    /** Takes a reference unless the expert was already freed (then the caller re-reads the map). */
    boolean tryRetain() {
        for (int r = refs.get(); r > 0; r = refs.get()) {
            if (refs.compareAndSet(r, r + 1)) {
                return true;
            }
        }
        return false;
    }

    void release() {
        int left = refs.decrementAndGet();
        if (left == 0) {
            free.run();
        } else if (left < 0) {
            throw new IllegalStateException("expert released more often than retained");
        }
    }
}
