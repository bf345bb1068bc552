package dev.lazarus.kt.tensor;

import static dev.lazarus.kt.tensor.Lanes16.I_EVENS_TWICE;
import static dev.lazarus.kt.tensor.Lanes16.I_ODD_QUADS;
import static dev.lazarus.kt.tensor.Lanes16.I_SWAP1;
import static dev.lazarus.kt.tensor.Lanes16.I_SWAP2;
import static dev.lazarus.kt.tensor.Lanes16.I_SWAP4;
import static dev.lazarus.kt.tensor.Lanes16.I_SWAP8;
import static dev.lazarus.kt.tensor.Lanes16.I_UPPER_HALF;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * llama-server's repacked-Q4_K GEMV order ({@link Q4KRepackedKernel#GEMV}) on ggml's own blocks, read in place
 * (dense matrices, memory-mapped experts), with decode's rows in pairs computed in 16-bit integer products as
 * {@link Q4KInt16Kernel} does; one row and four activations are {@link Q4KRepackedKernel#GEMV}'s. Bit for bit
 * its results: everything inside a super-block is an exact integer.
 *
 * <p>ggml's 128 quant bytes read as two vectors of 32 shorts: short t of vector v holds values {@code 2m} and
 * {@code 2m + 1} (m = t mod 16) of the sub-block pair {@code 2v + t / 16}, nibble p being value
 * {@code 2m + p / 2} of the pair's sub-block {@code p mod 2}. So a lane of an even plane (0, 2) always holds one
 * sub-block, and of an odd plane its neighbour: four short accumulators per row (vector × even/odd plane), two
 * products per lane, against {@link Activation#int16InPlace} (the quants in this order). Two neighbouring short
 * lanes belong to the same sub-block, so each accumulator is summed pairwise into int lanes (shift, add, shift),
 * the lanes 0-7 holding one sub-block and 8-15 the next but one, and multiplied by their scales.
 */
final class Q4KInt16InPlaceKernel implements RowKernel {

    static final Q4KInt16InPlaceKernel INSTANCE = new Q4KInt16InPlaceKernel();

    private static final VectorSpecies<Short> S = ShortVector.SPECIES_512;
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_512;
    private static final VectorSpecies<Long> L2 = LongVector.SPECIES_128;
    /** From a row's eight scales in lanes 0-7 (and again in 8-15): sub-blocks 4v + k (lanes 0-7), 4v + k + 2 (8-15). */
    private static final VectorShuffle<Integer> SUB_0_2 = VectorShuffle.fromOp(I, i -> i < 8 ? 0 : 2);
    private static final VectorShuffle<Integer> SUB_1_3 = VectorShuffle.fromOp(I, i -> i < 8 ? 1 : 3);
    private static final VectorShuffle<Integer> SUB_4_6 = VectorShuffle.fromOp(I, i -> i < 8 ? 4 : 6);
    private static final VectorShuffle<Integer> SUB_5_7 = VectorShuffle.fromOp(I, i -> i < 8 ? 5 : 7);
    private static final short NIBBLE = 0xF;
    private static final int BLOCK_BYTES = 144;

    private Q4KInt16InPlaceKernel() {
    }

    @Override
    public float dot(MemorySegment w, long o, Activation x, int n) {
        return Q4KRepackedKernel.GEMV.dot(w, o, x, n);
    }

    @Override
    public void dotVectors4(MemorySegment w, long o, Activation[] xs, int from, int n, float[][] outs, int row) {
        Q4KRepackedKernel.GEMV.dotVectors4(w, o, xs, from, n, outs, row);
    }

    /** Rows in pairs ({@link #superBlock2}), with one scratch for the whole range. */
    @Override
    public void dotRows(MemorySegment w, long rowBytes, Activation x, int n, float[] out, int rowStart, int rowEnd) {
        int[] sums = new int[16];
        long[] headerWords = new long[4];
        int r = rowStart;
        for (; r + 1 < rowEnd; r += 2) {
            long o = r * rowBytes;
            float accA = 0, accB = 0, minA = 0, minB = 0;
            for (int b = 0; b < n / 256; b++) {
                long blkA = o + BLOCK_BYTES * b, blkB = blkA + rowBytes;
                long packedA = w.get(Layouts.I64, blkA + 4), packedB = w.get(Layouts.I64, blkB + 4);
                int packedHighA = w.get(Layouts.I32, blkA + 12), packedHighB = w.get(Layouts.I32, blkB + 12);
                headerWords[0] = Q4KRepackedKernel.scales(packedA, packedHighA);
                headerWords[1] = Q4KRepackedKernel.scales(packedB, packedHighB);
                headerWords[2] = Q4KRepackedKernel.mins(packedA, packedHighA);
                headerWords[3] = Q4KRepackedKernel.mins(packedB, packedHighB);
                superBlock2(w, blkA + 16, blkB + 16, headerWords, x.int16InPlace, x.bsums, 256 * b, sums);
                float dy = x.scales[b];
                accA = Math.fma((float) sums[0], Layouts.f16(w, blkA) * dy, accA);
                accB = Math.fma((float) sums[8], Layouts.f16(w, blkB) * dy, accB);
                minA = Math.fma((float) sums[4], Layouts.f16(w, blkA + 2) * dy, minA);
                minB = Math.fma((float) sums[12], Layouts.f16(w, blkB + 2) * dy, minB);
            }
            out[r] = accA - minA;
            out[r + 1] = accB - minB;
        }
        if (r < rowEnd) {
            out[r] = dot(w, r * rowBytes, x, n);
        }
    }

    /**
     * Σ scale·(q·y) of one super-block of each of two rows (quants at qA, qB) into sums[0] and sums[8], their
     * Σ min·bsum into sums[4] and sums[12], in int lanes (exact) and reduced together; {@code headerWords}: the
     * unpacked scales of A and B, then their mins.
     */
    private static void superBlock2(MemorySegment w, long qA, long qB, long[] headerWords, short[] ys, int[] bsums,
                                    int at, int[] sums) {
        ShortVector a0 = ShortVector.fromMemorySegment(S, w, qA, Simd.LE), a1 = ShortVector.fromMemorySegment(S, w, qA + 64, Simd.LE);
        ShortVector b0 = ShortVector.fromMemorySegment(S, w, qB, Simd.LE), b1 = ShortVector.fromMemorySegment(S, w, qB + 64, Simd.LE);
        // even planes: sub-blocks 0 | 2 (vector 0), 4 | 6 (vector 1); odd planes: 1 | 3, 5 | 7
        ShortVector y = ShortVector.fromArray(S, ys, at);
        ShortVector evenA0 = a0.and(NIBBLE).mul(y), evenB0 = b0.and(NIBBLE).mul(y);
        y = ShortVector.fromArray(S, ys, at + 32);
        ShortVector oddA0 = a0.lanewise(VectorOperators.LSHR, 4).and(NIBBLE).mul(y);
        ShortVector oddB0 = b0.lanewise(VectorOperators.LSHR, 4).and(NIBBLE).mul(y);
        y = ShortVector.fromArray(S, ys, at + 64);
        evenA0 = evenA0.add(a0.lanewise(VectorOperators.LSHR, 8).and(NIBBLE).mul(y));
        evenB0 = evenB0.add(b0.lanewise(VectorOperators.LSHR, 8).and(NIBBLE).mul(y));
        y = ShortVector.fromArray(S, ys, at + 96);
        oddA0 = oddA0.add(a0.lanewise(VectorOperators.LSHR, 12).mul(y));
        oddB0 = oddB0.add(b0.lanewise(VectorOperators.LSHR, 12).mul(y));
        y = ShortVector.fromArray(S, ys, at + 128);
        ShortVector evenA1 = a1.and(NIBBLE).mul(y), evenB1 = b1.and(NIBBLE).mul(y);
        y = ShortVector.fromArray(S, ys, at + 160);
        ShortVector oddA1 = a1.lanewise(VectorOperators.LSHR, 4).and(NIBBLE).mul(y);
        ShortVector oddB1 = b1.lanewise(VectorOperators.LSHR, 4).and(NIBBLE).mul(y);
        y = ShortVector.fromArray(S, ys, at + 192);
        evenA1 = evenA1.add(a1.lanewise(VectorOperators.LSHR, 8).and(NIBBLE).mul(y));
        evenB1 = evenB1.add(b1.lanewise(VectorOperators.LSHR, 8).and(NIBBLE).mul(y));
        y = ShortVector.fromArray(S, ys, at + 224);
        oddA1 = oddA1.add(a1.lanewise(VectorOperators.LSHR, 12).mul(y));
        oddB1 = oddB1.add(b1.lanewise(VectorOperators.LSHR, 12).mul(y));
        // neighbouring shorts summed into int lanes: ((x << 16) + x) >> 16 = high + low (|sum| < 2^15), then scaled
        IntVector scA = (IntVector) LongVector.broadcast(L2, headerWords[0]).reinterpretAsBytes()
                .convertShape(VectorOperators.B2I, I, 0);
        IntVector scB = (IntVector) LongVector.broadcast(L2, headerWords[1]).reinterpretAsBytes()
                .convertShape(VectorOperators.B2I, I, 0);
        IntVector x = evenA0.reinterpretAsInts();
        IntVector sA = x.lanewise(VectorOperators.LSHL, 16).add(x).lanewise(VectorOperators.ASHR, 16).mul(scA.rearrange(SUB_0_2));
        x = oddA0.reinterpretAsInts();
        sA = sA.add(x.lanewise(VectorOperators.LSHL, 16).add(x).lanewise(VectorOperators.ASHR, 16).mul(scA.rearrange(SUB_1_3)));
        x = evenA1.reinterpretAsInts();
        sA = sA.add(x.lanewise(VectorOperators.LSHL, 16).add(x).lanewise(VectorOperators.ASHR, 16).mul(scA.rearrange(SUB_4_6)));
        x = oddA1.reinterpretAsInts();
        sA = sA.add(x.lanewise(VectorOperators.LSHL, 16).add(x).lanewise(VectorOperators.ASHR, 16).mul(scA.rearrange(SUB_5_7)));
        x = evenB0.reinterpretAsInts();
        IntVector sB = x.lanewise(VectorOperators.LSHL, 16).add(x).lanewise(VectorOperators.ASHR, 16).mul(scB.rearrange(SUB_0_2));
        x = oddB0.reinterpretAsInts();
        sB = sB.add(x.lanewise(VectorOperators.LSHL, 16).add(x).lanewise(VectorOperators.ASHR, 16).mul(scB.rearrange(SUB_1_3)));
        x = evenB1.reinterpretAsInts();
        sB = sB.add(x.lanewise(VectorOperators.LSHL, 16).add(x).lanewise(VectorOperators.ASHR, 16).mul(scB.rearrange(SUB_4_6)));
        x = oddB1.reinterpretAsInts();
        sB = sB.add(x.lanewise(VectorOperators.LSHL, 16).add(x).lanewise(VectorOperators.ASHR, 16).mul(scB.rearrange(SUB_5_7)));
        // lanes 0-7 min_j·bsum32_j of row A, lanes 8-15 of row B, then all four sums reduced together
        IntVector m = (IntVector) LongVector.fromArray(L2, headerWords, 2).reinterpretAsBytes()
                .convertShape(VectorOperators.B2I, I, 0);
        IntVector bs = IntVector.fromArray(I, bsums, at / 16);
        m = m.mul(bs.add(bs.rearrange(I_SWAP1)).rearrange(I_EVENS_TWICE));
        IntVector z = sA.blend(sB, I_UPPER_HALF).add(sB.blend(sA, I_UPPER_HALF).rearrange(I_SWAP8));
        z = z.add(z.rearrange(I_SWAP4)).blend(m.add(m.rearrange(I_SWAP4)), I_ODD_QUADS);
        z = z.add(z.rearrange(I_SWAP2));
        z.add(z.rearrange(I_SWAP1)).intoArray(sums, 0);
    }
}
