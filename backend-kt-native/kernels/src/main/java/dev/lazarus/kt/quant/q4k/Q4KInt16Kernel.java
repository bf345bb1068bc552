package dev.lazarus.kt.quant.q4k;

import static dev.lazarus.kt.tensor.Lanes16.I_EVENS_TWICE;
import static dev.lazarus.kt.tensor.Lanes16.I_ODD_QUADS;
import static dev.lazarus.kt.tensor.Lanes16.I_SWAP1;
import static dev.lazarus.kt.tensor.Lanes16.I_SWAP2;
import static dev.lazarus.kt.tensor.Lanes16.I_SWAP4;
import static dev.lazarus.kt.tensor.Lanes16.I_SWAP8;
import static dev.lazarus.kt.tensor.Lanes16.I_UPPER_HALF;

import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.Lanes16;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.Q8KShortOrder;
import dev.lazarus.kt.tensor.RowGroups;
import dev.lazarus.kt.tensor.RowKernel;
import dev.lazarus.kt.tensor.Simd;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * llama-server's repacked-Q4_K GEMV order ({@code GgmlKQuantKernels.q4kRepacked}) on {@link Q4KPacked}'s
 * {@link Q4KPacked.Order#SHORT_LANES} layout with 16-bit integer products: bit for bit the results of
 * {@code Q4KPackedKernel} (bench sources), at about half its operations per value.
 *
 * <p>The Vector API has no int8 dot product, but {@code q·y} (q 0..15, y an int8 Q8_K quant) fits in 16 bits
 * ({@code |q·y| ≤ 1920}) and eight of them still do ({@code ≤ 15360}). Every lane of a super-block's quants holds
 * one sub-block (lane mod 8), so a row's 32-lane short accumulator takes one multiply and one add per 32 values,
 * each lane summing its eight products exactly, against the activation's {@link #ACTIVATION_ORDER} copy in the
 * same order. Per super-block the accumulator is widened to int once, multiplied by the lane's sub-block scale
 * and reduced; nibble planes are taken out with a shift and a mask (none for the lowest, no mask for the top).
 * The float folds ({@code d·dy}, {@code dmin·dy}) are those of the GEMV order.
 *
 * <p>Written for C2 as {@link Q4KRepackedKernel} (see there): flat vector code, one method per super-block, no
 * vector crossing a call. Super-block b of row r lies at index {@code groups.block(r, b)} of the quants and of the
 * headers ({@link RowGroups}: rows interleaved in pairs, which {@link #dotRows} reads as one stream).
 */
public final class Q4KInt16Kernel implements RowKernel {

    /**
     * The Q8_K quants in the order of {@link Q4KPacked.Order#SHORT_LANES}: value {@code 16c + 4p + (t / 8)} of
     * sub-block {@code t mod 8} at {@code 32·(4c + p) + t}, so that each nibble plane multiplies with one load.
     */
    static final Q8KShortOrder ACTIVATION_ORDER = new Q8KShortOrder((c, p, t) -> 32 * (t & 7) + 16 * c + 4 * p + (t >> 3));

    private static final VectorSpecies<Short> S = ShortVector.SPECIES_512;
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_512;
    private static final VectorSpecies<Long> L2 = LongVector.SPECIES_128;
    private static final VectorShuffle<Integer> LOW_TWICE = VectorShuffle.fromOp(I, i -> i & 7);
    private static final VectorShuffle<Integer> HIGH_TWICE = VectorShuffle.fromOp(I, i -> 8 + (i & 7));
    /** Lane i takes lane i / 2: eight mins (lanes 0-7), each against its two 16-value bsums. */
    private static final VectorShuffle<Integer> HALVES = VectorShuffle.fromOp(I, i -> i >> 1);
    private static final short NIBBLE = 0xF;
    private static final int Q = Q4KPacked.QUANT_BYTES;
    private static final int H = Q4KPacked.HEADER_BYTES;

    /** The order of the matrix's super-blocks. */
    private final RowGroups groups;
    /** Byte offset of the matrix's headers in its segment. */
    private final long headers;

    public Q4KInt16Kernel(RowGroups groups) {
        this.groups = groups;
        this.headers = groups.blocks() * Q;
    }

    /** One row (an odd row out of {@link #dotRows}; batches of two or three activations): the same folds. */
    @Override
    public float dot(MemorySegment w, long o, Activation x, int n) {
        int row = groups.row(o, Q), step = groups.stride(row);
        long g = groups.block(row, 0);
        float acc = 0, accMin = 0;
        short[] xq = x.form(ACTIVATION_ORDER); // the activation in this kernel's order
        for (int b = 0; b < n / 256; b++, g += step) {
            long h = headers + g * H;
            int isum = superBlock(w, g * Q, w.get(Layouts.I64, h), xq, 256 * b);
            float dy = x.scales[b];
            acc = Math.fma((float) isum, w.get(Layouts.F32, h + 16) * dy, acc);
            accMin = Math.fma((float) minSum(w.get(Layouts.I64, h + 8), x.bsums, b), w.get(Layouts.F32, h + 20) * dy, accMin);
        }
        return acc - accMin;
    }

    /** Σ scale·(q·y) of one super-block of one row (quants at q), as {@link #superBlock2} forms it. */
    private static int superBlock(MemorySegment w, long q, long scales, short[] ys, int at) {
        ShortVector v0 = ShortVector.fromMemorySegment(S, w, q, Simd.LE), v1 = ShortVector.fromMemorySegment(S, w, q + 64, Simd.LE);
        ShortVector acc = v0.and(NIBBLE).mul(ShortVector.fromArray(S, ys, at));
        for (int k = 1; k < 8; k++) {
            ShortVector v = k < 4 ? v0 : v1;
            int shift = 4 * (k & 3);
            ShortVector p = shift == 0 ? v.and(NIBBLE)
                    : shift == 12 ? v.lanewise(VectorOperators.LSHR, 12) : v.lanewise(VectorOperators.LSHR, shift).and(NIBBLE);
            acc = acc.add(p.mul(ShortVector.fromArray(S, ys, at + 32 * k)));
        }
        IntVector sc = (IntVector) LongVector.broadcast(L2, scales).reinterpretAsBytes()
                .convertShape(VectorOperators.B2I, I, 0);
        return ((IntVector) acc.convertShape(VectorOperators.S2I, I, 0)).add((IntVector) acc.convertShape(VectorOperators.S2I, I, 1))
                .mul(sc).reduceLanes(VectorOperators.ADD);
    }

    /**
     * Rows in the pairs of the layout ({@link #superBlock2}), with one scratch for the whole range; a row without its
     * pair in the range (the first of a range that starts at an odd row, the last of one that ends at an even row)
     * alone.
     */
    @Override
    public void dotRows(MemorySegment w, long rowBytes, Activation x, int n, float[] out, int rowStart, int rowEnd) {
        int[] sums = new int[16];
        long[] headerWords = new long[4];
        int r = rowStart;
        if ((r & 1) != 0 && r < rowEnd) {
            out[r] = dot(w, r * rowBytes, x, n);
            r++;
        }
        for (; r + 1 < rowEnd; r += 2) {
            pairs(w, groups.block(r, 0), groups.block(r + 1, 0), groups.stride(r), x, n, out, r, sums, headerWords);
        }
        if (r < rowEnd) {
            out[r] = dot(w, r * rowBytes, x, n);
        }
    }

    /**
     * Rows r and r + 1 (r even), whose first super-blocks are gA and gB (side by side in groups of two or more, a row
     * apart in groups of one), the next ones {@code step} on, into out[r] and out[r + 1]; {@code headerWords}: scratch
     * for the scales and mins of both.
     */
    private void pairs(MemorySegment w, long gA, long gB, int step, Activation x, int n, float[] out, int r, int[] sums,
                       long[] headerWords) {
        float accA = 0, accB = 0, minA = 0, minB = 0;
        short[] xq = x.form(ACTIVATION_ORDER); // the activation in this kernel's order
        for (int b = 0; b < n / 256; b++, gA += step, gB += step) {
            long hA = headers + gA * H, hB = headers + gB * H;
            headerWords[0] = w.get(Layouts.I64, hA);
            headerWords[1] = w.get(Layouts.I64, hB);
            headerWords[2] = w.get(Layouts.I64, hA + 8);
            headerWords[3] = w.get(Layouts.I64, hB + 8);
            superBlock2(w, gA * Q, gB * Q, headerWords, xq, x.bsums, 256 * b, sums);
            float dy = x.scales[b];
            accA = Math.fma((float) sums[0], w.get(Layouts.F32, hA + 16) * dy, accA);
            accB = Math.fma((float) sums[8], w.get(Layouts.F32, hB + 16) * dy, accB);
            minA = Math.fma((float) sums[4], w.get(Layouts.F32, hA + 20) * dy, minA);
            minB = Math.fma((float) sums[12], w.get(Layouts.F32, hB + 20) * dy, minB);
        }
        out[r] = accA - minA;
        out[r + 1] = accB - minB;
    }

    /**
     * Σ scale·(q·y) of one super-block of each of two rows (quants at qA, qB) into sums[0] and sums[8], their
     * Σ min·bsum into sums[4] and sums[12], all in int lanes (exact) and reduced together; {@code headerWords}:
     * the scales of A and B, then their mins.
     */
    private static void superBlock2(MemorySegment w, long qA, long qB, long[] headerWords,
                                    short[] ys, int[] bsums, int at, int[] sums) {
        ShortVector a0 = ShortVector.fromMemorySegment(S, w, qA, Simd.LE), a1 = ShortVector.fromMemorySegment(S, w, qA + 64, Simd.LE);
        ShortVector b0 = ShortVector.fromMemorySegment(S, w, qB, Simd.LE), b1 = ShortVector.fromMemorySegment(S, w, qB + 64, Simd.LE);
        ShortVector y = ShortVector.fromArray(S, ys, at);
        ShortVector accA = a0.and(NIBBLE).mul(y), accB = b0.and(NIBBLE).mul(y);
        y = ShortVector.fromArray(S, ys, at + 32);
        accA = accA.add(a0.lanewise(VectorOperators.LSHR, 4).and(NIBBLE).mul(y));
        accB = accB.add(b0.lanewise(VectorOperators.LSHR, 4).and(NIBBLE).mul(y));
        y = ShortVector.fromArray(S, ys, at + 64);
        accA = accA.add(a0.lanewise(VectorOperators.LSHR, 8).and(NIBBLE).mul(y));
        accB = accB.add(b0.lanewise(VectorOperators.LSHR, 8).and(NIBBLE).mul(y));
        y = ShortVector.fromArray(S, ys, at + 96);
        accA = accA.add(a0.lanewise(VectorOperators.LSHR, 12).mul(y));
        accB = accB.add(b0.lanewise(VectorOperators.LSHR, 12).mul(y));
        y = ShortVector.fromArray(S, ys, at + 128);
        accA = accA.add(a1.and(NIBBLE).mul(y));
        accB = accB.add(b1.and(NIBBLE).mul(y));
        y = ShortVector.fromArray(S, ys, at + 160);
        accA = accA.add(a1.lanewise(VectorOperators.LSHR, 4).and(NIBBLE).mul(y));
        accB = accB.add(b1.lanewise(VectorOperators.LSHR, 4).and(NIBBLE).mul(y));
        y = ShortVector.fromArray(S, ys, at + 192);
        accA = accA.add(a1.lanewise(VectorOperators.LSHR, 8).and(NIBBLE).mul(y));
        accB = accB.add(b1.lanewise(VectorOperators.LSHR, 8).and(NIBBLE).mul(y));
        y = ShortVector.fromArray(S, ys, at + 224);
        accA = accA.add(a1.lanewise(VectorOperators.LSHR, 12).mul(y));
        accB = accB.add(b1.lanewise(VectorOperators.LSHR, 12).mul(y));
        // int lane l: the short lanes l and l + 16, both of sub-block l mod 8; scales of row A in 0-7, B in 8-15
        IntVector sc = (IntVector) LongVector.fromArray(L2, headerWords, 0).reinterpretAsBytes()
                .convertShape(VectorOperators.B2I, I, 0);
        IntVector sA = ((IntVector) accA.convertShape(VectorOperators.S2I, I, 0))
                .add((IntVector) accA.convertShape(VectorOperators.S2I, I, 1)).mul(sc.rearrange(LOW_TWICE));
        IntVector sB = ((IntVector) accB.convertShape(VectorOperators.S2I, I, 0))
                .add((IntVector) accB.convertShape(VectorOperators.S2I, I, 1)).mul(sc.rearrange(HIGH_TWICE));
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

    /** Four activations through the GEMV order (routed experts in prefill), each nibble plane taken out once. */
    @Override
    public void dotVectors4(MemorySegment w, long o, Activation[] xs, int from, int n, float[][] outs, int row) {
        Activation x0 = xs[from], x1 = xs[from + 1], x2 = xs[from + 2], x3 = xs[from + 3];
        int[] sums = new int[32];
        float acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0, min0 = 0, min1 = 0, min2 = 0, min3 = 0;
        int r = groups.row(o, Q), step = groups.stride(r);
        long g = groups.block(r, 0);
        for (int b = 0; b < n / 256; b++, g += step) {
            long h = headers + g * H;
            superBlock4(w, g * Q, w.get(Layouts.I64, h), w.get(Layouts.I64, h + 8), x0, x1, x2, x3, 256 * b, sums);
            float d = w.get(Layouts.F32, h + 16), dmin = w.get(Layouts.F32, h + 20);
            acc0 = Math.fma((float) sums[0], d * x0.scales[b], acc0);
            acc1 = Math.fma((float) sums[8], d * x1.scales[b], acc1);
            acc2 = Math.fma((float) sums[4], d * x2.scales[b], acc2);
            acc3 = Math.fma((float) sums[12], d * x3.scales[b], acc3);
            min0 = Math.fma((float) sums[16], dmin * x0.scales[b], min0);
            min1 = Math.fma((float) sums[24], dmin * x1.scales[b], min1);
            min2 = Math.fma((float) sums[20], dmin * x2.scales[b], min2);
            min3 = Math.fma((float) sums[28], dmin * x3.scales[b], min3);
        }
        outs[from][row] = acc0 - min0;
        outs[from + 1][row] = acc1 - min1;
        outs[from + 2][row] = acc2 - min2;
        outs[from + 3][row] = acc3 - min3;
    }

    /** Σ min_j·(bsum_2j + bsum_2j+1) of super-block b (exact). */
    private static int minSum(long mins, int[] bsums, int b) {
        int sum = 0;
        for (int j = 0, k = 16 * b; j < 8; j++, k += 2) {
            sum += ((int) (mins >>> 8 * j) & 0xFF) * (bsums[k] + bsums[k + 1]);
        }
        return sum;
    }

    /**
     * Σ scale·(q·y) of one super-block (quants at q) against four activations into sums[0], sums[8], sums[4] and
     * sums[12], the nibble planes taken out once for all four (with constant shifts: a shift by a loop variable let
     * C2 leave {@code ShortVector.lanewise} out of line in some JVMs, boxing its vectors); their Σ min·bsum (exact)
     * into sums[16], [24], [20] and [28], in int lanes reduced together as well. Flat: a form that took each
     * activation in a loop through a scratch array measured 20 % slower.
     */
    private static void superBlock4(MemorySegment w, long q, long scales, long mins, Activation x0, Activation x1,
                                    Activation x2, Activation x3, int at, int[] sums) {
        short[] y0 = x0.form(ACTIVATION_ORDER), y1 = x1.form(ACTIVATION_ORDER), y2 = x2.form(ACTIVATION_ORDER), y3 = x3.form(ACTIVATION_ORDER);
        ShortVector v0 = ShortVector.fromMemorySegment(S, w, q, Simd.LE), v1 = ShortVector.fromMemorySegment(S, w, q + 64, Simd.LE);
        ShortVector p0 = v0.and(NIBBLE), p1 = v0.lanewise(VectorOperators.LSHR, 4).and(NIBBLE);
        ShortVector p2 = v0.lanewise(VectorOperators.LSHR, 8).and(NIBBLE), p3 = v0.lanewise(VectorOperators.LSHR, 12);
        ShortVector p4 = v1.and(NIBBLE), p5 = v1.lanewise(VectorOperators.LSHR, 4).and(NIBBLE);
        ShortVector p6 = v1.lanewise(VectorOperators.LSHR, 8).and(NIBBLE), p7 = v1.lanewise(VectorOperators.LSHR, 12);
        ShortVector s0 = p0.mul(ShortVector.fromArray(S, y0, at)), s1 = p0.mul(ShortVector.fromArray(S, y1, at));
        ShortVector s2 = p0.mul(ShortVector.fromArray(S, y2, at)), s3 = p0.mul(ShortVector.fromArray(S, y3, at));
        s0 = s0.add(p1.mul(ShortVector.fromArray(S, y0, at + 32)));
        s1 = s1.add(p1.mul(ShortVector.fromArray(S, y1, at + 32)));
        s2 = s2.add(p1.mul(ShortVector.fromArray(S, y2, at + 32)));
        s3 = s3.add(p1.mul(ShortVector.fromArray(S, y3, at + 32)));
        s0 = s0.add(p2.mul(ShortVector.fromArray(S, y0, at + 64)));
        s1 = s1.add(p2.mul(ShortVector.fromArray(S, y1, at + 64)));
        s2 = s2.add(p2.mul(ShortVector.fromArray(S, y2, at + 64)));
        s3 = s3.add(p2.mul(ShortVector.fromArray(S, y3, at + 64)));
        s0 = s0.add(p3.mul(ShortVector.fromArray(S, y0, at + 96)));
        s1 = s1.add(p3.mul(ShortVector.fromArray(S, y1, at + 96)));
        s2 = s2.add(p3.mul(ShortVector.fromArray(S, y2, at + 96)));
        s3 = s3.add(p3.mul(ShortVector.fromArray(S, y3, at + 96)));
        s0 = s0.add(p4.mul(ShortVector.fromArray(S, y0, at + 128)));
        s1 = s1.add(p4.mul(ShortVector.fromArray(S, y1, at + 128)));
        s2 = s2.add(p4.mul(ShortVector.fromArray(S, y2, at + 128)));
        s3 = s3.add(p4.mul(ShortVector.fromArray(S, y3, at + 128)));
        s0 = s0.add(p5.mul(ShortVector.fromArray(S, y0, at + 160)));
        s1 = s1.add(p5.mul(ShortVector.fromArray(S, y1, at + 160)));
        s2 = s2.add(p5.mul(ShortVector.fromArray(S, y2, at + 160)));
        s3 = s3.add(p5.mul(ShortVector.fromArray(S, y3, at + 160)));
        s0 = s0.add(p6.mul(ShortVector.fromArray(S, y0, at + 192)));
        s1 = s1.add(p6.mul(ShortVector.fromArray(S, y1, at + 192)));
        s2 = s2.add(p6.mul(ShortVector.fromArray(S, y2, at + 192)));
        s3 = s3.add(p6.mul(ShortVector.fromArray(S, y3, at + 192)));
        s0 = s0.add(p7.mul(ShortVector.fromArray(S, y0, at + 224)));
        s1 = s1.add(p7.mul(ShortVector.fromArray(S, y1, at + 224)));
        s2 = s2.add(p7.mul(ShortVector.fromArray(S, y2, at + 224)));
        s3 = s3.add(p7.mul(ShortVector.fromArray(S, y3, at + 224)));
        IntVector sc = (IntVector) LongVector.broadcast(L2, scales).reinterpretAsBytes()
                .convertShape(VectorOperators.B2I, I, 0);
        IntVector i0 = ((IntVector) s0.convertShape(VectorOperators.S2I, I, 0)).add((IntVector) s0.convertShape(VectorOperators.S2I, I, 1)).mul(sc);
        IntVector i1 = ((IntVector) s1.convertShape(VectorOperators.S2I, I, 0)).add((IntVector) s1.convertShape(VectorOperators.S2I, I, 1)).mul(sc);
        IntVector i2 = ((IntVector) s2.convertShape(VectorOperators.S2I, I, 0)).add((IntVector) s2.convertShape(VectorOperators.S2I, I, 1)).mul(sc);
        IntVector i3 = ((IntVector) s3.convertShape(VectorOperators.S2I, I, 0)).add((IntVector) s3.convertShape(VectorOperators.S2I, I, 1)).mul(sc);
        IntVector z01 = i0.blend(i1, I_UPPER_HALF).add(i1.blend(i0, I_UPPER_HALF).rearrange(I_SWAP8));
        IntVector z23 = i2.blend(i3, I_UPPER_HALF).add(i3.blend(i2, I_UPPER_HALF).rearrange(I_SWAP8));
        IntVector t = z01.blend(z23, I_ODD_QUADS).add(z23.blend(z01, I_ODD_QUADS).rearrange(I_SWAP4));
        t = t.add(t.rearrange(I_SWAP2));
        t.add(t.rearrange(I_SWAP1)).intoArray(sums, 0);
        // the mins: lane i = min_(i/2)·bsum_i, so that an activation's 16 lanes sum to its Σ min·bsum; reduced alike
        IntVector mn = ((IntVector) LongVector.broadcast(L2, mins).reinterpretAsBytes().convertShape(VectorOperators.B2I, I, 0))
                .rearrange(HALVES);
        int bs = at / 16;
        IntVector m0 = mn.mul(IntVector.fromArray(I, x0.bsums, bs)), m1 = mn.mul(IntVector.fromArray(I, x1.bsums, bs));
        IntVector m2 = mn.mul(IntVector.fromArray(I, x2.bsums, bs)), m3 = mn.mul(IntVector.fromArray(I, x3.bsums, bs));
        z01 = m0.blend(m1, I_UPPER_HALF).add(m1.blend(m0, I_UPPER_HALF).rearrange(I_SWAP8));
        z23 = m2.blend(m3, I_UPPER_HALF).add(m3.blend(m2, I_UPPER_HALF).rearrange(I_SWAP8));
        t = z01.blend(z23, I_ODD_QUADS).add(z23.blend(z01, I_ODD_QUADS).rearrange(I_SWAP4));
        t = t.add(t.rearrange(I_SWAP2));
        t.add(t.rearrange(I_SWAP1)).intoArray(sums, 16);
    }
}
