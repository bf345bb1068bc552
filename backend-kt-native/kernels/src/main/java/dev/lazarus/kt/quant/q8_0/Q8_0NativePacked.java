package dev.lazarus.kt.quant.q8_0;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.NativeKernels;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;

/**
 * Q8_0 copied at load into the native kernels' 16-row layout ({@code src/main/c/lz_q8016.h}, which has the byte map):
 * the 16 rows of a group side by side block by block, their f16 scales together and their quants in 4-byte chunks
 * (+ 128, the unsigned operand of {@code vpdpbusd}), so that one vector instruction makes the same 4-value lane of
 * {@link Q8_0Kernel}'s fold for 16 rows. 34 bytes per row and block, as ggml's; every number is ggml's own, and the
 * products are those of {@link NativeKernels.Kernel#Q8_0}'s order, bit for bit.
 */
public final class Q8_0NativePacked {

    /** Rows per group: the lanes of one 512-bit vector of floats. */
    static final int ROWS = 16;
    private static final int BLOCK_BYTES = 34;
    private static final int GROUP_BLOCK_BYTES = ROWS * BLOCK_BYTES;
    private static final int D = 0, Q = 32;

    private Q8_0NativePacked() {
    }

    /** Whether a {@code rows × cols} Q8_0 matrix has this layout: whole groups of rows, whole blocks. */
    public static boolean fits(int rows, int cols) {
        return rows % ROWS == 0 && cols % 32 == 0;
    }

    /** Bytes of a packed {@code rows × cols} matrix (as many as ggml's). */
    public static long bytes(int rows, int cols) {
        return (long) rows * (cols / 32) * BLOCK_BYTES;
    }

    /** What the native kernels take as a row's bytes: its share of a group, so group g lies at {@code 16 g} of them. */
    public static long rowBytes(int cols) {
        return (long) (cols / 32) * BLOCK_BYTES;
    }

    /** {@code src} (ggml's Q8_0 blocks, row-major) in this layout, in a new 64-byte aligned segment from {@code alloc}. */
    public static MemorySegment pack(MemorySegment src, int rows, int cols, SegmentAllocator alloc) {
        if (!fits(rows, cols)) {
            throw new IllegalArgumentException("Q8_0 %d × %d: rows must be a multiple of %d".formatted(rows, cols, ROWS));
        }
        MemorySegment dst = alloc.allocate(bytes(rows, cols), 64);
        int nb = cols / 32;
        for (int r = 0; r < rows; r++) {
            int lane = r % ROWS;
            for (int b = 0; b < nb; b++) {
                long blk = (long) BLOCK_BYTES * ((long) r * nb + b), g = groupBlock(r, b, nb);
                dst.set(Layouts.I16, g + D + 2L * lane, src.get(Layouts.I16, blk));
                for (int k = 0; k < 8; k++) { // chunk k: quants 4k .. 4k + 3, + 128 (a flipped sign bit)
                    dst.set(Layouts.I32, g + Q + 64L * k + 4L * lane, src.get(Layouts.I32, blk + 2 + 4L * k) ^ 0x80808080);
                }
            }
        }
        return dst;
    }

    /** Row {@code row} of a packed matrix as f32 (ggml's Q8_0 dequantization of the original row). */
    public static void dequantizeRow(MemorySegment packed, int cols, int row, float[] dst, int dstOffset) {
        int nb = cols / 32, lane = row % ROWS;
        MemorySegment blocks = MemorySegment.ofArray(new byte[BLOCK_BYTES * nb]);
        for (int b = 0; b < nb; b++) {
            long g = groupBlock(row, b, nb), at = (long) BLOCK_BYTES * b;
            blocks.set(Layouts.I16, at, packed.get(Layouts.I16, g + D + 2L * lane));
            for (int k = 0; k < 8; k++) {
                blocks.set(Layouts.I32, at + 2 + 4L * k, packed.get(Layouts.I32, g + Q + 64L * k + 4L * lane) ^ 0x80808080);
            }
        }
        GgmlCodec.decode(GgmlType.Q8_0, blocks, 0, dst, dstOffset, cols);
    }

    /** Byte offset of block b of the group holding {@code row}. */
    private static long groupBlock(int row, int b, int nb) {
        return (long) GROUP_BLOCK_BYTES * ((long) (row / ROWS) * nb + b);
    }
}
