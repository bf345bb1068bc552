package dev.lazarus.kt.placement;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The live placement: one published {@link PlacedExpert} per (slot, expert). A swap publishes the new
 * tier's copy (already prepared) in one atomic store and drops the map's reference to the old one,
 * which is freed when the last forward pass using it lets go; readers never wait.
 */
final class ExpertSlots {

    private final int experts;
    private final AtomicReferenceArray<PlacedExpert> slots;

    ExpertSlots(int layers, int experts) {
        this.experts = experts;
        this.slots = new AtomicReferenceArray<>(layers * experts);
    }

    /** The expert's current placement, retained: the caller must {@link PlacedExpert#release} it. */
    PlacedExpert acquire(int slot, int expert) {
        int i = slot * experts + expert;
        while (true) {
            PlacedExpert p = slots.get(i);
            if (p == null) {
                throw new IllegalStateException("expert placement is closed");
            }
            if (p.tryRetain()) {
                return p;
            }
            // freed between the read and the retain: a swap published a successor, read again
        }
    }

    Tier tier(int slot, int expert) {
        PlacedExpert p = slots.get(slot * experts + expert);
        return p == null ? null : p.tier();
    }

    /** The memory the experts placed in {@code tier} now hold there. */
    long heldBytes(Tier tier) {
        long sum = 0;
        for (int i = 0; i < slots.length(); i++) {
            PlacedExpert p = slots.get(i);
            sum += p != null && p.tier() == tier ? p.heldBytes() : 0;
        }
        return sum;
    }

    /** Publishes {@code next} and releases the previous placement (if any). */
    void swap(int slot, int expert, PlacedExpert next) {
        PlacedExpert old = slots.getAndSet(slot * experts + expert, next);
        if (old != null) {
            old.release();
        }
    }

    void clear() {
        for (int i = 0; i < slots.length(); i++) {
            PlacedExpert old = slots.getAndSet(i, null);
            if (old != null) {
                old.release();
            }
        }
    }
}
