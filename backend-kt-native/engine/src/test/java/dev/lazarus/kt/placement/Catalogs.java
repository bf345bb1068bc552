package dev.lazarus.kt.placement;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.model.ExpertLayer;
import dev.lazarus.kt.model.ExpertMatrix;
import dev.lazarus.kt.model.ExpertWeights;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/** Expert catalogs of zeroed F32 weights for planner tests: only sizes matter there. */
final class Catalogs {

    private Catalogs() {}

    /** {@code layers} MoE blocks numbered from {@code firstLayer}, {@code experts} each of 3 × 32 × 32 F32 (12 KiB). */
    static ExpertCatalog of(int firstLayer, int layers, int experts) {
        List<ExpertLayer> out = new ArrayList<>();
        for (int l = 0; l < layers; l++) {
            List<ExpertWeights> ws = new ArrayList<>();
            for (int e = 0; e < experts; e++) {
                ws.add(new ExpertWeights(matrix(), matrix(), matrix()));
            }
            out.add(new ExpertLayer(firstLayer + l, ws));
        }
        return new ExpertCatalog(out);
    }

    static long expertBytes() {
        return 3 * 32 * 32 * 4;
    }

    private static ExpertMatrix matrix() {
        return new ExpertMatrix(GgmlType.F32, MemorySegment.ofArray(new byte[32 * 32 * 4]), 32, 32);
    }
}
