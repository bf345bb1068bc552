package dev.lazarus.kt.matrix;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.quant.q4k.Q4KInt16InPlaceKernel;
import dev.lazarus.kt.quant.q4k.Q4KInt16Kernel;
import dev.lazarus.kt.quant.q4k.Q4KPacked;
import dev.lazarus.kt.quant.q4k.Q4KPackedGemmKernel;
import dev.lazarus.kt.quant.q4k.Q4KPackedKernel;
import dev.lazarus.kt.quant.q4k.Q4KRepackedKernel;
import dev.lazarus.kt.quant.q6k.Q6KInt16Kernel;
import dev.lazarus.kt.quant.q6k.Q6KKernel;
import dev.lazarus.kt.tensor.RowGroups;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;

/**
 * The Java kernels' bit-identical alternatives, kept to measure against the one Java path per type that the engine
 * runs ({@link WeightMatrices}); each computes the same numbers bit for bit. They were {@code -D} switches of the
 * engine ({@code lazarus.kt.q4k.int16}, {@code lazarus.kt.q6k.int16}, {@code lazarus.kt.packed.group},
 * {@code lazarus.kt.repack-dense}); here a benchmark builds them by name ({@link #of}).
 *
 * <ul>
 *   <li>{@code q4k-f32}: Q4_K on ggml's blocks in f32 products ({@link Q4KRepackedKernel#GEMV}, its four-row
 *       {@link Q4KRepackedKernel#GEMM}) instead of {@link Q4KInt16InPlaceKernel}'s int16 products;</li>
 *   <li>{@code q4k-ram-f32}, {@code q4k-dense-f32}: Q4_K copied into {@link Q4KPacked}'s nibble planes with
 *       {@link Q4KPackedKernel} (f32 products; {@code dense}: with {@link Q4KPackedGemmKernel}'s GEMM order for fours)
 *       instead of the 16-bit lanes of {@link Q4KInt16Kernel};</li>
 *   <li>{@code q6k-f32}: Q6_K's vec_dot on ggml's blocks in f32 products ({@link Q6KKernel}) instead of
 *       {@link Q6KInt16Kernel} (batches of eight or more take {@link Q6KInt16Kernel#TILED} in both);</li>
 *   <li>{@code q4k-ram-gN}, {@code q6k-ram-gN}: the RAM tier's packed rows in groups of N ({@link RowGroups}; the
 *       engine's are pairs).</li>
 * </ul>
 */
public final class JavaTwins {

    private JavaTwins() {}

    /** The alternative {@code name} (see the class comment) of a {@code rows × cols} matrix of {@code type} on {@code data}. */
    public static WeightMatrix of(String name, GgmlType type, MemorySegment data, int rows, int cols, SegmentAllocator alloc) {
        java.util.regex.Matcher grouped = java.util.regex.Pattern.compile("(q4k|q6k)-ram-g(\\d+)").matcher(name);
        if (grouped.matches()) {
            int group = Integer.parseInt(grouped.group(2));
            return grouped.group(1).equals("q4k") ? WeightMatrices.packedQ4K(data, rows, cols, alloc, group)
                    : WeightMatrices.packedQ6K(data, rows, cols, alloc, group);
        }
        return switch (name) {
            case "q4k-f32" -> new KernelMatrix(require(type, GgmlType.Q4_K), data, rows, cols, Q4KRepackedKernel.GEMV,
                    Q4KRepackedKernel.GEMM, null);
            case "q4k-ram-f32" -> packedQ4KNibbles(require(type, GgmlType.Q4_K), data, rows, cols, alloc, false);
            case "q4k-dense-f32" -> packedQ4KNibbles(require(type, GgmlType.Q4_K), data, rows, cols, alloc, true);
            case "q6k-f32" -> new KernelMatrix(require(type, GgmlType.Q6_K), data, rows, cols, Q6KKernel.INSTANCE, null,
                    Q6KInt16Kernel.TILED);
            default -> throw new IllegalArgumentException("no Java twin '" + name
                    + "' (q4k-f32, q4k-ram-f32, q4k-dense-f32, q6k-f32, q4k-ram-gN, q6k-ram-gN)");
        };
    }

    private static WeightMatrix packedQ4KNibbles(GgmlType type, MemorySegment data, int rows, int cols,
                                                 SegmentAllocator alloc, boolean withGemm) {
        RowGroups groups = new RowGroups(2, rows, cols / 256);
        Q4KPacked.Order order = Q4KPacked.Order.NIBBLE_PLANES;
        MemorySegment packed = Q4KPacked.pack(data, groups, order, alloc);
        return new KernelMatrix(type, packed, rows, cols, (long) (cols / 256) * Q4KPacked.QUANT_BYTES,
                Q4KPacked.bytes(rows, cols), new Q4KPackedKernel(groups), withGemm ? new Q4KPackedGemmKernel(groups) : null,
                null, (seg, row, dst, at) -> Q4KPacked.dequantizeRow(seg, groups, order, row, dst, at));
    }

    private static GgmlType require(GgmlType type, GgmlType wanted) {
        if (type != wanted) {
            throw new IllegalArgumentException("this twin is for " + wanted + ", not " + type);
        }
        return type;
    }
}
