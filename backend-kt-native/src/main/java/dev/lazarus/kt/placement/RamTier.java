package dev.lazarus.kt.placement;

import dev.lazarus.kt.model.ExpertMatrix;
import dev.lazarus.kt.model.ExpertWeights;
import dev.lazarus.kt.model.SwiGlu;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Hot experts copied once out of the mapped file into process memory: cache-line aligned, never
 * evicted by page-cache pressure, and laid out as the CPU kernels read them. The copy is off-heap
 * (one shared arena per expert), so freeing it after a swap returns the memory at once.
 */
final class RamTier {

    private static final long ALIGNMENT = 64;

    private RamTier() {}

    static PlacedExpert load(ExpertWeights w) {
        Arena arena = Arena.ofShared();
        try {
            ExpertWeights copy = new ExpertWeights(copy(arena, w.gate()), copy(arena, w.up()), copy(arena, w.down()));
            return PlacedExpert.onCpu(Tier.RAM, w.bytes(), copy.cpu(), arena::close);
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
        }
    }

    static PlacedExpert mapped(ExpertWeights w) {
        return PlacedExpert.onCpu(Tier.MMAP, w.bytes(), w.cpu(), () -> { });
    }

    private static ExpertMatrix copy(Arena arena, ExpertMatrix m) {
        MemorySegment target = arena.allocate(m.bytes(), ALIGNMENT);
        target.copyFrom(m.data());
        return m.withData(target);
    }
}
