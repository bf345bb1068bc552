package dev.lazarus.kt.placement;

import dev.lazarus.kt.model.ExpertMatrix;
import dev.lazarus.kt.model.ExpertWeights;
import dev.lazarus.kt.model.SwiGlu;
import dev.lazarus.kt.tensor.WeightMatrices;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.lang.foreign.Arena;

/**
 * Hot experts copied once out of the mapped file into process memory: 64-byte aligned, never evicted by
 * page-cache pressure, and repacked where a cheaper layout exists ({@link WeightMatrices#copiedExpert}: Q4_K into
 * a layout whose kernel needs no byte widening or scale unpacking, bit-identical results; other types copied as
 * they are). The copy is off-heap (one shared arena per expert), so freeing it after a swap returns the memory
 * at once. {@code -Dlazarus.kt.ram-tier.repack=false} keeps plain copies (for measuring what repacking buys).
 */
final class RamTier {

    static final String REPACK_PROPERTY = "lazarus.kt.ram-tier.repack";

    private RamTier() {}

    static PlacedExpert load(ExpertWeights w) {
        boolean repack = !"false".equals(System.getProperty(REPACK_PROPERTY));
        Arena arena = Arena.ofShared();
        try {
            SwiGlu.Weights cpu = new SwiGlu.Weights(copy(arena, w.gate(), repack), copy(arena, w.up(), repack),
                    copy(arena, w.down(), repack));
            return PlacedExpert.onCpu(Tier.RAM, w.bytes(), cpu, arena::close);
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
        }
    }

    static PlacedExpert mapped(ExpertWeights w) {
        return PlacedExpert.onCpu(Tier.MMAP, w.bytes(), w.cpu(), () -> { });
    }

    private static WeightMatrix copy(Arena arena, ExpertMatrix m, boolean repack) {
        return WeightMatrices.copiedExpert(m.type(), m.data(), m.rows(), m.cols(), repack, arena);
    }
}
