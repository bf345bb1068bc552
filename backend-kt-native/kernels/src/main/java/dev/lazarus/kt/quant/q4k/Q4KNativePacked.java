package dev.lazarus.kt.quant.q4k;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.NativeKernels;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.ValueLayout;

/**
 * Q4_K copied at load into the native kernels' 16-row layout ({@code src/main/c/lz_q4k16.h}, which has the byte
 * map): the 16 rows of a group side by side super-block by super-block, so that the native GEMV reads one stream and
 * serves 16 rows per pass over the activation, one 32-bit lane per row; the 6-bit scales and mins unpacked to bytes
 * once here instead of once per product. 148 bytes per super-block (ggml's 144, d and dmin kept as f16, so every
 * number is ggml's own and the products are those of {@link NativeKernels.Kernel#Q4K_GEMV}'s order, bit for bit).
 */
public final class Q4KNativePacked {

    /** Rows per group: the lanes of one 512-bit vector of int32. */
    static final int ROWS = 16;
    /** A row's bytes per super-block. */
    static final int ROW_BLOCK_BYTES = 148;
    private static final int GROUP_BLOCK_BYTES = ROWS * ROW_BLOCK_BYTES;
    private static final int D = 0, DMIN = 32, SC = 64, MN = 192, Q = 320;
    private static final int BLOCK_BYTES = 144;

    private Q4KNativePacked() {
    }

    /** Whether a {@code rows × cols} Q4_K matrix has this layout: whole groups of rows, whole super-blocks. */
    public static boolean fits(int rows, int cols) {
        return rows % ROWS == 0 && cols % 256 == 0;
    }

    /** Bytes of a packed {@code rows × cols} matrix. */
    public static long bytes(int rows, int cols) {
        return (long) rows * (cols / 256) * ROW_BLOCK_BYTES;
    }

    /** What the native kernels take as a row's bytes: its share of a group, so group g lies at {@code 16 g} of them. */
    public static long rowBytes(int cols) {
        return (long) (cols / 256) * ROW_BLOCK_BYTES;
    }

    /** {@code src} (ggml's Q4_K blocks, row-major) in this layout, in a new 64-byte aligned segment from {@code alloc}. */
    public static MemorySegment pack(MemorySegment src, int rows, int cols, SegmentAllocator alloc) {
        if (!fits(rows, cols)) {
            throw new IllegalArgumentException("Q4_K %d × %d: rows must be a multiple of %d".formatted(rows, cols, ROWS));
        }
        MemorySegment dst = alloc.allocate(bytes(rows, cols), 64);
        int nb = cols / 256;
        for (int r = 0; r < rows; r++) {
            int lane = r % ROWS;
            for (int b = 0; b < nb; b++) {
                long blk = (long) BLOCK_BYTES * ((long) r * nb + b), g = groupBlock(r, b, nb);
                dst.set(Layouts.I16, g + D + 2L * lane, src.get(Layouts.I16, blk));
                dst.set(Layouts.I16, g + DMIN + 2L * lane, src.get(Layouts.I16, blk + 2));
                for (int j = 0; j < 8; j++) {
                    dst.set(ValueLayout.JAVA_BYTE, g + SC + 16L * j + lane, (byte) Layouts.kScale(src, blk + 4, j));
                    dst.set(ValueLayout.JAVA_BYTE, g + MN + 32L * (j / 2) + 2L * lane + (j & 1), (byte) Layouts.kMin(src, blk + 4, j));
                }
                for (int chunk = 0; chunk < 32; chunk++) { // chunk 8p + k: quant bytes 32p + 4k.. = 4 chunk..
                    dst.set(Layouts.I32, g + Q + 64L * chunk + 4L * lane, src.get(Layouts.I32, blk + 16 + 4L * chunk));
                }
            }
        }
        return dst;
    }

    /** Row {@code row} of a packed matrix as f32 (ggml's Q4_K dequantization of the original row). */
    public static void dequantizeRow(MemorySegment packed, int cols, int row, float[] dst, int dstOffset) {
        int nb = cols / 256, lane = row % ROWS;
        MemorySegment blocks = MemorySegment.ofArray(new byte[BLOCK_BYTES * nb]);
        for (int b = 0; b < nb; b++) {
            long g = groupBlock(row, b, nb), at = (long) BLOCK_BYTES * b;
            blocks.set(Layouts.I16, at, packed.get(Layouts.I16, g + D + 2L * lane));
            blocks.set(Layouts.I16, at + 2, packed.get(Layouts.I16, g + DMIN + 2L * lane));
            int[] sc = new int[8], mn = new int[8];
            for (int j = 0; j < 8; j++) {
                sc[j] = Layouts.u8(packed, g + SC + 16L * j + lane);
                mn[j] = Layouts.u8(packed, g + MN + 32L * (j / 2) + 2L * lane + (j & 1));
            }
            for (int j = 0; j < 4; j++) { // ggml's 6-bit packing, the inverse of Layouts.kScale / kMin
                blocks.set(ValueLayout.JAVA_BYTE, at + 4 + j, (byte) (sc[j] | (sc[j + 4] >> 4) << 6));
                blocks.set(ValueLayout.JAVA_BYTE, at + 8 + j, (byte) (mn[j] | (mn[j + 4] >> 4) << 6));
                blocks.set(ValueLayout.JAVA_BYTE, at + 12 + j, (byte) (sc[j + 4] & 0xF | (mn[j + 4] & 0xF) << 4));
            }
            for (int chunk = 0; chunk < 32; chunk++) {
                blocks.set(Layouts.I32, at + 16 + 4L * chunk, packed.get(Layouts.I32, g + Q + 64L * chunk + 4L * lane));
            }
        }
        GgmlCodec.decode(GgmlType.Q4_K, blocks, 0, dst, dstOffset, cols);
    }

    /** Byte offset of super-block b of the group holding {@code row}. */
    private static long groupBlock(int row, int b, int nb) {
        return (long) GROUP_BLOCK_BYTES * ((long) (row / ROWS) * nb + b);
    }
}
