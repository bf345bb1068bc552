package dev.lazarus.kt.quant.q4k;

import static dev.lazarus.kt.tensor.Lanes16.F_ODD_QUADS;
import static dev.lazarus.kt.tensor.Lanes16.F_SWAP1;
import static dev.lazarus.kt.tensor.Lanes16.F_SWAP2;
import static dev.lazarus.kt.tensor.Lanes16.F_SWAP4;
import static dev.lazarus.kt.tensor.Lanes16.F_SWAP8;
import static dev.lazarus.kt.tensor.Lanes16.F_UPPER_HALF;
import static dev.lazarus.kt.tensor.Lanes16.I_EVENS_TWICE;
import static dev.lazarus.kt.tensor.Lanes16.I_SWAP1;

import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.Lanes16;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.RowGroups;
import dev.lazarus.kt.tensor.RowKernel;
import dev.lazarus.kt.tensor.Simd;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * llama-server's repacked-Q4_K GEMV order ({@code GgmlKQuantKernels.q4kRepacked}) on the {@link Q4KPacked}
 * layout: the same exact integer sums and the same float folds as {@link Q4KRepackedKernel#GEMV}, so bit for bit
 * its results; cheaper per value: one 512-bit load per 128 values and a mask per sixteen (no byte-to-int widening,
 * no shift: see {@link #UNIT}), scales and mins one per byte and {@code d}/{@code dmin} as f32 (no unpacking per super-block).
 *
 * <p>Super-block b of row r lies at index {@code groups.block(r, b)} of the quants and of the headers
 * ({@link RowGroups}: rows interleaved in pairs, which {@link #dotRows} reads as one stream). Written for C2 as {@link Q4KRepackedKernel} (see there): flat vector
 * code, one method per super-block, no vector crossing a call, and the same blend/permute reductions.
 */
public final class Q4KPackedKernel implements RowKernel {

    private static final VectorSpecies<Float> F = FloatVector.SPECIES_512;
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_512;
    private static final VectorSpecies<Long> L2 = LongVector.SPECIES_128;
    private static final int Q = Q4KPacked.QUANT_BYTES;
    private static final int H = Q4KPacked.HEADER_BYTES;
    /**
     * Sub-block k's nibbles are masked in place, so its lanes hold {@code q·16^k} (k &lt; 7; the top nibble is
     * shifted down, since its mask would set the sign bit): exact in f32 (4 significant bits), as are
     * {@code (q·16^k)·y} and the sum of a sub-block's two halves ({@code 16^k·(q0·y0 + q1·y1)}, below 2^12 · 16^k).
     * Multiplying that by {@code scale·16^-k} (exact) gives exactly {@code scale·(q0·y0 + q1·y1)}, the integer the
     * widening kernel forms: the same sums, one shift and one conversion fewer per sixteen values.
     */
    static final float[] UNIT = {1f, 0x1p-4f, 0x1p-8f, 0x1p-12f, 0x1p-16f, 0x1p-20f, 0x1p-24f, 1f};

    /** The order of the matrix's super-blocks. */
    private final RowGroups groups;
    /** Byte offset of the matrix's headers in its segment. */
    private final long headers;

    public Q4KPackedKernel(RowGroups groups) {
        this.groups = groups;
        this.headers = groups.blocks() * Q;
    }

    @Override
    public float dot(MemorySegment w, long o, Activation x, int n) {
        float[] xs = x.values;
        float acc = 0, accMin = 0;
        int row = groups.row(o, Q), step = groups.stride(row);
        long g = groups.block(row, 0);
        for (int b = 0; b < n / 256; b++, g += step) {
            long h = headers + g * H;
            long scales = w.get(Layouts.I64, h), mins = w.get(Layouts.I64, h + 8);
            FloatVector sum = FloatVector.zero(F);
            IntVector v0 = IntVector.fromMemorySegment(I, w, g * Q, Simd.LE);
            IntVector v1 = IntVector.fromMemorySegment(I, w, g * Q + 64, Simd.LE);
            for (int k = 0; k < 8; k++) {
                int at = 256 * b + 32 * k;
                IntVector n0 = k < 7 ? v0.and(0xF << 4 * k) : v0.lanewise(VectorOperators.LSHR, 28);
                IntVector n1 = k < 7 ? v1.and(0xF << 4 * k) : v1.lanewise(VectorOperators.LSHR, 28);
                FloatVector lo = ((FloatVector) n0.convert(VectorOperators.I2F, 0)).mul(FloatVector.fromArray(F, xs, at));
                lo = ((FloatVector) n1.convert(VectorOperators.I2F, 0)).fma(FloatVector.fromArray(F, xs, at + 16), lo);
                sum = lo.fma(FloatVector.broadcast(F, (float) ((int) (scales >>> 8 * k) & 0xFF) * UNIT[k]), sum);
            }
            int isum = ((IntVector) sum.convert(VectorOperators.F2I, 0)).reduceLanes(VectorOperators.ADD);
            float dy = x.scales[b];
            acc = Math.fma((float) isum, w.get(Layouts.F32, h + 16) * dy, acc);
            int minSum = 0;
            for (int j = 0, k = 16 * b; j < 8; j++, k += 2) {
                minSum += ((int) (mins >>> 8 * j) & 0xFF) * (x.bsums[k] + x.bsums[k + 1]);
            }
            accMin = Math.fma((float) minSum, w.get(Layouts.F32, h + 20) * dy, accMin);
        }
        return acc - accMin;
    }

    /**
     * Rows in the pairs of the layout ({@link #superBlock2}), with one scratch for the whole range; a row without its
     * pair in the range alone.
     */
    @Override
    public void dotRows(MemorySegment w, long rowBytes, Activation x, int n, float[] out, int rowStart, int rowEnd) {
        int[] sums = new int[16];
        long[] mins = new long[2];
        int r = rowStart;
        if ((r & 1) != 0 && r < rowEnd) {
            out[r] = dot(w, r * rowBytes, x, n);
            r++;
        }
        for (; r + 1 < rowEnd; r += 2) {
            int step = groups.stride(r);
            // side by side in groups of two or more, a row apart in groups of one
            long gA = groups.block(r, 0), gB = groups.block(r + 1, 0);
            float accA = 0, accB = 0, minA = 0, minB = 0;
            for (int b = 0; b < n / 256; b++, gA += step, gB += step) {
                long hA = headers + gA * H, hB = headers + gB * H;
                mins[0] = w.get(Layouts.I64, hA + 8);
                mins[1] = w.get(Layouts.I64, hB + 8);
                superBlock2(w, gA * Q, gB * Q, w.get(Layouts.I64, hA), w.get(Layouts.I64, hB), mins,
                        x.values, x.bsums, 256 * b, sums);
                float dy = x.scales[b];
                accA = Math.fma((float) sums[0], w.get(Layouts.F32, hA + 16) * dy, accA);
                accB = Math.fma((float) sums[8], w.get(Layouts.F32, hB + 16) * dy, accB);
                minA = Math.fma((float) sums[4], w.get(Layouts.F32, hA + 20) * dy, minA);
                minB = Math.fma((float) sums[12], w.get(Layouts.F32, hB + 20) * dy, minB);
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
     * Σ min·bsum into sums[4] and sums[12], reduced together as {@code Q4KRepackedKernel.superBlock2} does.
     */
    private static void superBlock2(MemorySegment w, long qA, long qB, long scalesA, long scalesB, long[] mins,
                                    float[] xs, int[] bsums, int at0, int[] sums) {
        FloatVector sumA = FloatVector.zero(F), sumB = sumA;
        IntVector a0 = IntVector.fromMemorySegment(I, w, qA, Simd.LE), a1 = IntVector.fromMemorySegment(I, w, qA + 64, Simd.LE);
        IntVector b0 = IntVector.fromMemorySegment(I, w, qB, Simd.LE), b1 = IntVector.fromMemorySegment(I, w, qB + 64, Simd.LE);
        for (int k = 0; k < 8; k++) {
            int at = at0 + 32 * k;
            FloatVector x0 = FloatVector.fromArray(F, xs, at), x1 = FloatVector.fromArray(F, xs, at + 16);
            IntVector nA0 = k < 7 ? a0.and(0xF << 4 * k) : a0.lanewise(VectorOperators.LSHR, 28);
            IntVector nA1 = k < 7 ? a1.and(0xF << 4 * k) : a1.lanewise(VectorOperators.LSHR, 28);
            FloatVector loA = ((FloatVector) nA0.convert(VectorOperators.I2F, 0)).mul(x0);
            loA = ((FloatVector) nA1.convert(VectorOperators.I2F, 0)).fma(x1, loA);
            sumA = loA.fma(FloatVector.broadcast(F, (float) ((int) (scalesA >>> 8 * k) & 0xFF) * UNIT[k]), sumA);
            IntVector nB0 = k < 7 ? b0.and(0xF << 4 * k) : b0.lanewise(VectorOperators.LSHR, 28);
            IntVector nB1 = k < 7 ? b1.and(0xF << 4 * k) : b1.lanewise(VectorOperators.LSHR, 28);
            FloatVector loB = ((FloatVector) nB0.convert(VectorOperators.I2F, 0)).mul(x0);
            loB = ((FloatVector) nB1.convert(VectorOperators.I2F, 0)).fma(x1, loB);
            sumB = loB.fma(FloatVector.broadcast(F, (float) ((int) (scalesB >>> 8 * k) & 0xFF) * UNIT[k]), sumB);
        }
        // lanes 0-7 min_j·bsum32_j of row A, lanes 8-15 of row B (exact), then all four sums reduced together
        FloatVector m = (FloatVector) LongVector.fromArray(L2, mins, 0).reinterpretAsBytes()
                .convertShape(VectorOperators.B2F, F, 0);
        IntVector bs = IntVector.fromArray(I, bsums, at0 / 16);
        FloatVector bs32 = (FloatVector) bs.add(bs.rearrange(I_SWAP1)).rearrange(I_EVENS_TWICE).convert(VectorOperators.I2F, 0);
        m = m.mul(bs32);
        FloatVector z = sumA.blend(sumB, F_UPPER_HALF).add(sumB.blend(sumA, F_UPPER_HALF).rearrange(F_SWAP8));
        z = z.add(z.rearrange(F_SWAP4)).blend(m.add(m.rearrange(F_SWAP4)), F_ODD_QUADS);
        IntVector zi = (IntVector) z.add(z.rearrange(F_SWAP2)).convert(VectorOperators.F2I, 0);
        zi.add(zi.rearrange(I_SWAP1)).intoArray(sums, 0);
    }

    /** Four activations through the GEMV order (routed experts in prefill), each chunk's quants converted once. */
    @Override
    public void dotVectors4(MemorySegment w, long o, Activation[] xs, int from, int n, float[][] outs, int row) {
        Activation x0 = xs[from], x1 = xs[from + 1], x2 = xs[from + 2], x3 = xs[from + 3];
        int[] sums = new int[16];
        float[] minSums = new float[16];
        long[] mins = new long[2];
        float acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0, min0 = 0, min1 = 0, min2 = 0, min3 = 0;
        int r = groups.row(o, Q), step = groups.stride(r);
        long g = groups.block(r, 0);
        for (int b = 0; b < n / 256; b++, g += step) {
            long h = headers + g * H;
            long m = w.get(Layouts.I64, h + 8);
            mins[0] = Long.expand(m, 0x00FF00FF00FF00FFL) * 0x0101L; // each min twice: against both 16-value bsums
            mins[1] = Long.expand(m >>> 32, 0x00FF00FF00FF00FFL) * 0x0101L;
            superBlock4(w, g * Q, w.get(Layouts.I64, h), mins, x0, x1, x2, x3, 256 * b, sums, minSums);
            float d = w.get(Layouts.F32, h + 16), dmin = w.get(Layouts.F32, h + 20);
            acc0 = Math.fma((float) sums[0], d * x0.scales[b], acc0);
            acc1 = Math.fma((float) sums[8], d * x1.scales[b], acc1);
            acc2 = Math.fma((float) sums[4], d * x2.scales[b], acc2);
            acc3 = Math.fma((float) sums[12], d * x3.scales[b], acc3);
            min0 = Math.fma(minSums[0], dmin * x0.scales[b], min0);
            min1 = Math.fma(minSums[8], dmin * x1.scales[b], min1);
            min2 = Math.fma(minSums[4], dmin * x2.scales[b], min2);
            min3 = Math.fma(minSums[12], dmin * x3.scales[b], min3);
        }
        outs[from][row] = acc0 - min0;
        outs[from + 1][row] = acc1 - min1;
        outs[from + 2][row] = acc2 - min2;
        outs[from + 3][row] = acc3 - min3;
    }

    /** {@code Q4KRepackedKernel.superBlock4} on the packed quants at {@code q}. */
    private static void superBlock4(MemorySegment w, long q, long scales, long[] mins,
                                    Activation x0, Activation x1, Activation x2, Activation x3, int at0, int[] sums,
                                    float[] minSums) {
        float[] v0s = x0.values, v1s = x1.values, v2s = x2.values, v3s = x3.values;
        FloatVector s0 = FloatVector.zero(F), s1 = s0, s2 = s0, s3 = s0;
        IntVector v0 = IntVector.fromMemorySegment(I, w, q, Simd.LE), v1 = IntVector.fromMemorySegment(I, w, q + 64, Simd.LE);
        for (int k = 0; k < 8; k++) {
            int at = at0 + 32 * k;
            FloatVector l = (FloatVector) (k < 7 ? v0.and(0xF << 4 * k) : v0.lanewise(VectorOperators.LSHR, 28))
                    .convert(VectorOperators.I2F, 0);
            FloatVector u = (FloatVector) (k < 7 ? v1.and(0xF << 4 * k) : v1.lanewise(VectorOperators.LSHR, 28))
                    .convert(VectorOperators.I2F, 0);
            FloatVector sc = FloatVector.broadcast(F, (float) ((int) (scales >>> 8 * k) & 0xFF) * UNIT[k]);
            s0 = u.fma(FloatVector.fromArray(F, v0s, at + 16), l.mul(FloatVector.fromArray(F, v0s, at))).fma(sc, s0);
            s1 = u.fma(FloatVector.fromArray(F, v1s, at + 16), l.mul(FloatVector.fromArray(F, v1s, at))).fma(sc, s1);
            s2 = u.fma(FloatVector.fromArray(F, v2s, at + 16), l.mul(FloatVector.fromArray(F, v2s, at))).fma(sc, s2);
            s3 = u.fma(FloatVector.fromArray(F, v3s, at + 16), l.mul(FloatVector.fromArray(F, v3s, at))).fma(sc, s3);
        }
        FloatVector z01 = s0.blend(s1, F_UPPER_HALF).add(s1.blend(s0, F_UPPER_HALF).rearrange(F_SWAP8));
        FloatVector z23 = s2.blend(s3, F_UPPER_HALF).add(s3.blend(s2, F_UPPER_HALF).rearrange(F_SWAP8));
        FloatVector t = z01.blend(z23, F_ODD_QUADS).add(z23.blend(z01, F_ODD_QUADS).rearrange(F_SWAP4));
        IntVector ti = (IntVector) t.add(t.rearrange(F_SWAP2)).convert(VectorOperators.F2I, 0);
        ti.add(ti.rearrange(I_SWAP1)).intoArray(sums, 0);
        FloatVector m = (FloatVector) LongVector.fromArray(L2, mins, 0).reinterpretAsBytes()
                .convertShape(VectorOperators.B2F, F, 0);
        int bs = at0 / 16;
        FloatVector p0 = m.mul((FloatVector) IntVector.fromArray(I, x0.bsums, bs).convert(VectorOperators.I2F, 0));
        FloatVector p1 = m.mul((FloatVector) IntVector.fromArray(I, x1.bsums, bs).convert(VectorOperators.I2F, 0));
        FloatVector p2 = m.mul((FloatVector) IntVector.fromArray(I, x2.bsums, bs).convert(VectorOperators.I2F, 0));
        FloatVector p3 = m.mul((FloatVector) IntVector.fromArray(I, x3.bsums, bs).convert(VectorOperators.I2F, 0));
        FloatVector y01 = p0.blend(p1, F_UPPER_HALF).add(p1.blend(p0, F_UPPER_HALF).rearrange(F_SWAP8));
        FloatVector y23 = p2.blend(p3, F_UPPER_HALF).add(p3.blend(p2, F_UPPER_HALF).rearrange(F_SWAP8));
        FloatVector u = y01.blend(y23, F_ODD_QUADS).add(y23.blend(y01, F_ODD_QUADS).rearrange(F_SWAP4));
        u = u.add(u.rearrange(F_SWAP2));
        u.add(u.rearrange(F_SWAP1)).intoArray(minSums, 0);
    }
}
