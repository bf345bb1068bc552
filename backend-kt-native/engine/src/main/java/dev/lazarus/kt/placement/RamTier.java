package dev.lazarus.kt.placement;

import dev.lazarus.kt.matrix.WeightMatrices;
import dev.lazarus.kt.model.ExpertMatrix;
import dev.lazarus.kt.model.ExpertWeights;
import dev.lazarus.kt.model.SwiGlu;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;

/**
 * Hot experts copied once out of the mapped file into process memory: 64-byte aligned, never evicted by
 * page-cache pressure, and repacked where a cheaper layout exists ({@link WeightMatrices#copiedExpert}: Q4_K into
 * a layout whose kernel needs no byte widening or scale unpacking, bit-identical results; other types copied as
 * they are). The copy is off-heap (one shared arena per expert), so freeing it after a swap returns the memory
 * at once. Plain copies ({@code new RamTier(false)}) are for measuring what repacking buys: the bench sources'
 * {@code PlainRamTier} installs a placement with them.
 *
 * <p>The tier is sized in the bytes it holds ({@link #bytes}), not the file's: a packed Q4_K copy is 5.6 % larger
 * than ggml's blocks, and a budget is a limit on memory.
 */
final class RamTier {

    /** Repacking where a cheaper layout exists: the engine's tier. */
    static final RamTier REPACKING = new RamTier(true);

    private final boolean repack;

    RamTier(boolean repack) {
        this.repack = repack;
    }

    /** The bytes {@link #load} allocates for {@code w}: what the planner counts against the tier's budget. */
    long bytes(ExpertWeights w) {
        return bytes(w.gate()) + bytes(w.up()) + bytes(w.down());
    }

    private long bytes(ExpertMatrix m) {
        return m.matrices().copiedExpertBytes(m.type(), m.bytes(), m.rows(), m.cols(), repack);
    }

    PlacedExpert load(ExpertWeights w) {
        Arena arena = Arena.ofShared();
        try {
            Held held = new Held(arena);
            SwiGlu.Weights cpu = new SwiGlu.Weights(copy(held, w.gate()), copy(held, w.up()), copy(held, w.down()), w.glu());
            return PlacedExpert.onCpu(Tier.RAM, w.bytes(), held.bytes, cpu, arena::close);
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
        }
    }

    static PlacedExpert mapped(ExpertWeights w) {
        return PlacedExpert.onCpu(Tier.MMAP, w.bytes(), w.bytes(), w.cpu(), () -> { });
    }

    private WeightMatrix copy(SegmentAllocator alloc, ExpertMatrix m) {
        return m.matrices().copiedExpert(m.type(), m.data(), m.rows(), m.cols(), repack, alloc);
    }

    /** Allocates from the expert's arena and counts what it hands out: the bytes the admin view reports. */
    private static final class Held implements SegmentAllocator {
        private final Arena arena;
        private long bytes;

        Held(Arena arena) {
            this.arena = arena;
        }

        @Override
        public MemorySegment allocate(long byteSize, long byteAlignment) {
            MemorySegment s = arena.allocate(byteSize, byteAlignment);
            bytes += byteSize;
            return s;
        }
    }
}
