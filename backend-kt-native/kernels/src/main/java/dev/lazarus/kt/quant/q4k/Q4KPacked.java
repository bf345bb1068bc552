package dev.lazarus.kt.quant.q4k;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.RowGroups;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.ValueLayout;

/**
 * A Q4_K matrix repacked once (the RAM tier) into a layout that is cheaper to decode than ggml's block and
 * holds the same numbers, so that {@code Q4KPackedKernel} (bench sources) rounds exactly as {@link Q4KRepackedKernel}:
 *
 * <ul>
 *   <li><b>quants</b> first, 128 bytes per 256-value super-block (super-block b of row r at {@code 128·g},
 *       g = {@code groups.block(r, b)}: rows in interleaved pairs by default, see {@link RowGroups}), as two
 *       64-byte chunks (one 512-bit load each) of sixteen 32-bit lanes; nibble k of lane i of chunk e is value
 *       {@code 16·e + i} of sub-block k. One load per 128 values and one mask per sixteen give {@code q·16^k} in
 *       int lanes (ggml's layout needs a byte-to-int widening, a shift and a mask); see {@code Q4KPackedKernel} (bench sources) for
 *       why the factor 16^k costs nothing. With the matrix 64-byte aligned, every chunk is;</li>
 *   <li><b>headers</b> after all quants, 24 bytes per super-block in the same order (at {@code 24·g}): the eight
 *       6-bit scales and eight mins one per byte (pre-unpacked), then {@code d} and {@code dmin} as f32 (converted
 *       from f16, exactly). Their own region (not beside the quants) keeps the quant chunks aligned and measured
 *       faster than headers inline before each pair's quants.</li>
 * </ul>
 *
 * <p>152 bytes per super-block against ggml's 144. The quants come in one of two {@link Order}s: the nibble planes
 * above ({@code Q4KPackedKernel} (bench sources), f32 products), or 16-bit lanes that each hold one sub-block
 * ({@link Q4KInt16Kernel}, int16 products); the headers are the same.
 */
public final class Q4KPacked {

    /** Where value l of sub-block j of a super-block lies in its 128 quant bytes. */
    public enum Order {
        /** Nibble j of 32-bit lane {@code l mod 16} of 64-byte chunk {@code l / 16}. */
        NIBBLE_PLANES((j, l) -> 8 * (64 * (l / 16) + 4 * (l & 15)) + 4 * j),
        /**
         * Nibble {@code p = (l / 4) mod 4} of 16-bit lane {@code 8·(l mod 4) + j} of 64-byte chunk {@code l / 16}:
         * every lane of every nibble plane holds values of one sub-block (lane mod 8), so a lane's eight products
         * per super-block share one scale (see {@link Q4KInt16Kernel}).
         */
        SHORT_LANES((j, l) -> 8 * (64 * (l / 16) + 2 * (8 * (l & 3) + j)) + 4 * ((l >> 2) & 3));

        /** Bit offset of value l of sub-block j at {@code 32·j + l}. */
        private final int[] bits = new int[256];

        Order(java.util.function.IntBinaryOperator bit) {
            for (int j = 0; j < 8; j++) {
                for (int l = 0; l < 32; l++) {
                    bits[32 * j + l] = bit.applyAsInt(j, l);
                }
            }
        }

        /** Bit offset of the nibble in the super-block's quants. */
        int bit(int j, int l) {
            return bits[32 * j + l];
        }
    }

    public static final int QUANT_BYTES = 128;
    static final int HEADER_BYTES = 24;
    private static final int BLOCK_BYTES = 144;

    private Q4KPacked() {
    }

    /** Bytes of a packed {@code rows × cols} matrix. */
    public static long bytes(int rows, int cols) {
        return (long) rows * (cols / 256) * (QUANT_BYTES + HEADER_BYTES);
    }

    /** Byte offset of the headers in a packed {@code rows × cols} matrix. */
    static long headers(int rows, int cols) {
        return (long) rows * (cols / 256) * QUANT_BYTES;
    }

    /**
     * {@code src} (ggml's Q4_K blocks, {@code groups.rows()} rows of {@code groups.blocksPerRow()} super-blocks) packed
     * in {@code order}, its super-blocks in the order of {@code groups}, into a new 64-byte aligned segment.
     */
    public static MemorySegment pack(MemorySegment src, RowGroups groups, Order order, SegmentAllocator alloc) {
        int rows = groups.rows(), cols = 256 * groups.blocksPerRow();
        MemorySegment dst = alloc.allocate(bytes(rows, cols), 64);
        long headers = headers(rows, cols);
        byte[] quants = new byte[QUANT_BYTES];
        int nb = groups.blocksPerRow();
        for (long s = 0; s < groups.blocks(); s++) { // super-block s of ggml's row-major order is g of the packed one
            long blk = BLOCK_BYTES * s, g = groups.block((int) (s / nb), (int) (s % nb));
            long packed = src.get(Layouts.I64, blk + 4);
            int packedHigh = src.get(Layouts.I32, blk + 12);
            long h = headers + HEADER_BYTES * g;
            dst.set(Layouts.I64, h, Layouts.kScales(packed, packedHigh));
            dst.set(Layouts.I64, h + 8, Layouts.kMins(packed, packedHigh));
            dst.set(Layouts.F32, h + 16, Layouts.f16(src, blk));
            dst.set(Layouts.F32, h + 20, Layouts.f16(src, blk + 2));
            java.util.Arrays.fill(quants, (byte) 0);
            for (int j = 0; j < 8; j++) { // ggml: sub-block j in the low nibbles of its pair's 32 bytes if even, else the high
                for (int l = 0; l < 32; l++) {
                    int q = Layouts.u8(src, blk + 16 + 16L * (j & ~1) + l) >> 4 * (j & 1) & 0xF;
                    int bit = order.bit(j, l);
                    quants[bit / 8] |= (byte) (q << (bit & 7));
                }
            }
            MemorySegment.copy(quants, 0, dst, ValueLayout.JAVA_BYTE, QUANT_BYTES * g, QUANT_BYTES);
        }
        return dst;
    }

    /** Super-block g (in the packed order) of a packed matrix back in ggml's Q4_K block (144 bytes) at {@code out[at..]}. */
    static void unpack(MemorySegment packed, long headers, long g, Order order, MemorySegment out, long at) {
        long h = headers + HEADER_BYTES * g;
        out.set(Layouts.I16, at, Float.floatToFloat16(packed.get(Layouts.F32, h + 16)));
        out.set(Layouts.I16, at + 2, Float.floatToFloat16(packed.get(Layouts.F32, h + 20)));
        for (int j = 0; j < 4; j++) { // ggml's 6-bit packing, the inverse of Layouts.kScale / kMin
            int sc = Layouts.u8(packed, h + j), sc4 = Layouts.u8(packed, h + j + 4);
            int m = Layouts.u8(packed, h + 8 + j), m4 = Layouts.u8(packed, h + 12 + j);
            out.set(ValueLayout.JAVA_BYTE, at + 4 + j, (byte) (sc | (sc4 >> 4) << 6));
            out.set(ValueLayout.JAVA_BYTE, at + 8 + j, (byte) (m | (m4 >> 4) << 6));
            out.set(ValueLayout.JAVA_BYTE, at + 12 + j, (byte) (sc4 & 0xF | (m4 & 0xF) << 4));
        }
        for (int j = 0; j < 8; j += 2) {
            for (int l = 0; l < 32; l++) {
                int lo = nibble(packed, g, order, j, l), hi = nibble(packed, g, order, j + 1, l);
                out.set(ValueLayout.JAVA_BYTE, at + 16 + 16L * j + l, (byte) (lo | hi << 4));
            }
        }
    }

    /** Row {@code row} of a packed matrix as f32 (ggml's Q4_K dequantization). */
    public static void dequantizeRow(MemorySegment packed, RowGroups groups, Order order, int row, float[] dst, int dstOffset) {
        int nb = groups.blocksPerRow();
        MemorySegment blocks = MemorySegment.ofArray(new byte[BLOCK_BYTES * nb]);
        for (int b = 0; b < nb; b++) {
            unpack(packed, groups.blocks() * QUANT_BYTES, groups.block(row, b), order, blocks, (long) BLOCK_BYTES * b);
        }
        GgmlCodec.decode(GgmlType.Q4_K, blocks, 0, dst, dstOffset, 256 * nb);
    }

    private static int nibble(MemorySegment packed, long g, Order order, int j, int l) {
        int bit = order.bit(j, l);
        return Layouts.u8(packed, QUANT_BYTES * g + bit / 8) >> (bit & 7) & 0xF;
    }
}
