package dev.lazarus.kt.quant.q6k;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.RowGroups;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.ValueLayout;

/**
 * A Q6_K matrix repacked once (the RAM tier) with each 6-bit code in a byte of its own, so that
 * {@link Q6KPackedKernel} widens 32 codes with one load where ggml's block needs two loads, a permute and about
 * nine shifts, masks and ors per 32; the numbers, and so every result, are those of ggml's block:
 *
 * <ul>
 *   <li><b>codes</b> first, 256 bytes per 256-value super-block (super-block b of row r at {@code 256·g},
 *       g = {@code groups.block(r, b)}: rows in interleaved pairs by default, see {@link RowGroups}), in the order
 *       of {@link Q6KInt16Kernel#ACTIVATION_ORDER}: byte {@code 128h + 32p + t} holds value
 *       {@code 128h + 32·(t / 16 + 2·(p mod 2)) + 2·(t mod 16) + p / 2} (the code ggml's in-place kernel
 *       assembles for lane t of nibble plane p of half h, see {@link Q6KInt16Kernel}). With the matrix 64-byte
 *       aligned, every 32-byte run is;</li>
 *   <li><b>headers</b> after all codes, 20 bytes per super-block in the same order (at {@code 20·g}): the sixteen int8 scales as stored, then
 *       {@code d} as f32 (converted from f16, exactly).</li>
 * </ul>
 *
 * <p>276 bytes per super-block against ggml's 210 (31 % more): the RAM tier's budget counts them
 * ({@code WeightMatrices#copiedExpertBytes}).
 */
public final class Q6KPacked {

    public static final int CODE_BYTES = 256;
    static final int HEADER_BYTES = 20;
    private static final int BLOCK_BYTES = 210;
    /** Value index (in ggml's super-block) of each code byte. */
    private static final int[] VALUE_AT = new int[CODE_BYTES];

    static {
        for (int h = 0; h < 2; h++) {
            for (int p = 0; p < 4; p++) {
                for (int t = 0; t < 32; t++) {
                    VALUE_AT[128 * h + 32 * p + t] = 128 * h + 32 * ((t >> 4) + 2 * (p & 1)) + 2 * (t & 15) + (p >> 1);
                }
            }
        }
    }

    private Q6KPacked() {
    }

    /** Bytes of a packed {@code rows × cols} matrix. */
    public static long bytes(int rows, int cols) {
        return (long) rows * (cols / 256) * (CODE_BYTES + HEADER_BYTES);
    }

    /** Byte offset of the headers in a packed {@code rows × cols} matrix. */
    static long headers(int rows, int cols) {
        return (long) rows * (cols / 256) * CODE_BYTES;
    }

    /**
     * {@code src} (ggml's Q6_K blocks, {@code groups.rows()} rows of {@code groups.blocksPerRow()} super-blocks) packed,
     * its super-blocks in the order of {@code groups}, into a new 64-byte aligned segment.
     */
    public static MemorySegment pack(MemorySegment src, RowGroups groups, SegmentAllocator alloc) {
        int rows = groups.rows(), cols = 256 * groups.blocksPerRow();
        MemorySegment dst = alloc.allocate(bytes(rows, cols), 64);
        long headers = headers(rows, cols);
        byte[] codes = new byte[CODE_BYTES];
        int nb = groups.blocksPerRow();
        for (long s = 0; s < groups.blocks(); s++) { // super-block s of ggml's row-major order is g of the packed one
            long blk = BLOCK_BYTES * s, g = groups.block((int) (s / nb), (int) (s % nb));
            for (int i = 0; i < CODE_BYTES; i++) {
                codes[i] = (byte) code(src, blk, VALUE_AT[i]);
            }
            MemorySegment.copy(codes, 0, dst, ValueLayout.JAVA_BYTE, CODE_BYTES * g, CODE_BYTES);
            long h = headers + HEADER_BYTES * g;
            MemorySegment.copy(src, blk + 192, dst, h, 16);
            dst.set(Layouts.F32, h + 16, Layouts.f16(src, blk + 208));
        }
        return dst;
    }

    /** Row {@code row} of a packed matrix as f32 (ggml's Q6_K dequantization of the block it came from). */
    public static void dequantizeRow(MemorySegment packed, RowGroups groups, int row, float[] dst, int dstOffset) {
        int nb = groups.blocksPerRow();
        MemorySegment blocks = MemorySegment.ofArray(new byte[BLOCK_BYTES * nb]);
        long headers = groups.blocks() * CODE_BYTES;
        for (int b = 0; b < nb; b++) {
            long g = groups.block(row, b), blk = (long) BLOCK_BYTES * b;
            for (int i = 0; i < CODE_BYTES; i++) {
                setCode(blocks, blk, VALUE_AT[i], Layouts.u8(packed, CODE_BYTES * g + i));
            }
            long h = headers + HEADER_BYTES * g;
            MemorySegment.copy(packed, h, blocks, blk + 192, 16);
            blocks.set(Layouts.I16, blk + 208, Float.floatToFloat16(packed.get(Layouts.F32, h + 16)));
        }
        GgmlCodec.decode(GgmlType.Q6_K, blocks, 0, dst, dstOffset, 256 * nb);
    }

    /**
     * ggml's code of value v = 128h + 32g + e of the block at blk: the low nibble (g &lt; 2) or high nibble of
     * {@code ql[64h + 32·(g mod 2) + e]}, and bits 2g..2g+1 of {@code qh[32h + e]} above it.
     */
    private static int code(MemorySegment s, long blk, int v) {
        int h = v >> 7, g = (v >> 5) & 3, e = v & 31;
        int low = Layouts.u8(s, blk + 64L * h + 32L * (g & 1) + e) >> 4 * (g >> 1) & 0xF;
        return low | (Layouts.u8(s, blk + 128 + 32L * h + e) >> 2 * g & 3) << 4;
    }

    /** The inverse of {@link #code}: ors the code's bits into a zeroed block. */
    private static void setCode(MemorySegment s, long blk, int v, int code) {
        int h = v >> 7, g = (v >> 5) & 3, e = v & 31;
        long ql = blk + 64L * h + 32L * (g & 1) + e, qh = blk + 128 + 32L * h + e;
        s.set(ValueLayout.JAVA_BYTE, ql, (byte) (Layouts.u8(s, ql) | (code & 0xF) << 4 * (g >> 1)));
        s.set(ValueLayout.JAVA_BYTE, qh, (byte) (Layouts.u8(s, qh) | (code >> 4) << 2 * g));
    }
}
