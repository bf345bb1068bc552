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
import dev.lazarus.kt.tensor.RowKernel;
import dev.lazarus.kt.tensor.Simd;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q4_K rows as llama-server's repacked GEMV and GEMM round them ({@code GgmlKQuantKernels.q4kRepacked} and
 * {@code GgmlKQuantKernels.q4kRepackedGemm} state the order one value at a time), vectorized where the
 * arithmetic is exact. Only the float folds are fixed: {@code fma((float) Σ scale·(q·y), d_w·d_y, acc)} and
 * its twin for the mins, once per super-block (GEMV) or per pair of sub-blocks (GEMM), then
 * {@code acc - accMin}. Everything inside a fold is an integer, so it may be formed in any order:
 *
 * <ul>
 *   <li>the 32 bytes of a pair of sub-blocks (low nibbles: sub-block 2p, high: 2p + 1) are widened to int
 *       lanes, split with an int mask and shift (x86 has no byte shifts), and converted to f32 once for every
 *       activation of a batch (prefill: four, {@link #dotVectors4});</li>
 *   <li>lane l of a 16-lane f32 vector gathers {@code scale_j·(q·y)} over the values l and l + 16 of each
 *       sub-block: at most 8·63·2·15·127 &lt; 2^24 per lane, so every product and sum is exact;</li>
 *   <li>the lanes are summed once per fold, several folds together (two rows in decode, four activations in
 *       prefill) by a blend/permute transpose: float while a partial sum covers at most eight lanes (below
 *       2^24), ints for the last step (a super-block's sum may pass 2^24);</li>
 *   <li>the 6-bit scales and mins are unpacked from two scalar loads (SWAR), and the mins are dotted with the
 *       activation's bsums in the same vectors.</li>
 * </ul>
 *
 * <p>Written for C2: a helper that takes or returns vectors and is not inlined boxes them (measured ten times
 * slower), and a method whose inlined vector code passes C2's node budget leaves calls uninlined; so the vector
 * code is written out flat, one method per super-block where a row's method grew too large, with results
 * handed back through small arrays allocated once per row range or call.
 */
public final class Q4KRepackedKernel implements RowKernel {

    /** llama-server's GEMV (one activation row): one fold per 256-value super-block. */
    public static final Q4KRepackedKernel GEMV = new Q4KRepackedKernel(false);
    /** Its GEMM (activation rows in groups of four): one fold per pair of sub-blocks. */
    public static final Q4KRepackedKernel GEMM = new Q4KRepackedKernel(true);

    private static final VectorSpecies<Float> F = FloatVector.SPECIES_512;
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_512;
    private static final VectorSpecies<Byte> B = ByteVector.SPECIES_128;
    private static final int BLOCK_BYTES = 144;
    private static final VectorSpecies<Long> L2 = LongVector.SPECIES_128;

    private final boolean foldPerPair;

    private Q4KRepackedKernel(boolean foldPerPair) {
        this.foldPerPair = foldPerPair;
    }

    @Override
    public float dot(MemorySegment w, long o, Activation x, int n) {
        return foldPerPair ? gemm(w, o, x, n) : gemv(w, o, x, n);
    }

    /** GEMV rows in pairs ({@link #gemv2}), with one scratch for the whole range. */
    @Override
    public void dotRows(MemorySegment w, long rowBytes, Activation x, int n, float[] out, int rowStart, int rowEnd) {
        if (foldPerPair) {
            RowKernel.super.dotRows(w, rowBytes, x, n, out, rowStart, rowEnd);
            return;
        }
        int[] sums = new int[16];
        long[] mins = new long[2];
        int r = rowStart;
        for (; r + 1 < rowEnd; r += 2) {
            gemv2(w, r * rowBytes, rowBytes, x, n, out, r, sums, mins);
        }
        if (r < rowEnd) {
            out[r] = gemv(w, r * rowBytes, x, n);
        }
    }

    @Override
    public void dotVectors4(MemorySegment w, long o, Activation[] xs, int from, int n, float[][] outs, int row) {
        if (foldPerPair) {
            gemm4(w, o, xs, from, n, outs, row);
        } else {
            gemv4(w, o, xs, from, n, outs, row);
        }
    }

    private static float gemv(MemorySegment w, long o, Activation x, int n) {
        float[] xs = x.values;
        float acc = 0, accMin = 0;
        for (int b = 0; b < n / 256; b++) {
            long blk = o + BLOCK_BYTES * b;
            long packed = w.get(Layouts.I64, blk + 4);
            int packedHigh = w.get(Layouts.I32, blk + 12);
            long scales = Layouts.kScales(packed, packedHigh);
            FloatVector sum = FloatVector.zero(F);
            for (int p = 0; p < 4; p++) {
                // vector code written out flat: a helper that takes or returns vectors and is not inlined boxes them
                long qs = blk + 16 + 32L * p;
                int at = 256 * b + 64 * p;
                IntVector q0 = (IntVector) ByteVector.fromMemorySegment(B, w, qs, Simd.LE).convertShape(VectorOperators.B2I, I, 0);
                IntVector q1 = (IntVector) ByteVector.fromMemorySegment(B, w, qs + 16, Simd.LE).convertShape(VectorOperators.B2I, I, 0);
                FloatVector lo = ((FloatVector) q0.and(0xF).convert(VectorOperators.I2F, 0)).mul(FloatVector.fromArray(F, xs, at));
                lo = ((FloatVector) q1.and(0xF).convert(VectorOperators.I2F, 0)).fma(FloatVector.fromArray(F, xs, at + 16), lo);
                FloatVector hi = ((FloatVector) q0.lanewise(VectorOperators.LSHR, 4).and(0xF).convert(VectorOperators.I2F, 0))
                        .mul(FloatVector.fromArray(F, xs, at + 32));
                hi = ((FloatVector) q1.lanewise(VectorOperators.LSHR, 4).and(0xF).convert(VectorOperators.I2F, 0))
                        .fma(FloatVector.fromArray(F, xs, at + 48), hi);
                sum = lo.fma(FloatVector.broadcast(F, (float) ((int) (scales >>> 16 * p) & 0xFF)), sum);
                sum = hi.fma(FloatVector.broadcast(F, (float) ((int) (scales >>> 16 * p + 8) & 0xFF)), sum);
            }
            int isum = ((IntVector) sum.convert(VectorOperators.F2I, 0)).reduceLanes(VectorOperators.ADD);
            float dy = x.scales[b];
            acc = Math.fma((float) isum, Layouts.f16(w, blk) * dy, acc);
            long mins = Layouts.kMins(packed, packedHigh);
            int minSum = 0;
            for (int j = 0, k = 16 * b; j < 8; j++, k += 2) { // scalar helpers were not inlined either
                minSum += ((int) (mins >>> 8 * j) & 0xFF) * (x.bsums[k] + x.bsums[k + 1]);
            }
            accMin = Math.fma((float) minSum, Layouts.f16(w, blk + 2) * dy, accMin);
        }
        return acc - accMin;
    }

    /**
     * Two rows (at {@code o} and {@code o + rowBytes}) through the GEMV order, each sharing the activation's loads
     * and bsums and reducing both rows' lanes together.
     */
    private static void gemv2(MemorySegment w, long o, long rowBytes, Activation x, int n, float[] out, int row,
                              int[] sums, long[] mins) {
        float[] xs = x.values;
        int[] bs = x.bsums;
        float accA = 0, accB = 0, minA = 0, minB = 0;
        for (int b = 0; b < n / 256; b++) {
            long blkA = o + BLOCK_BYTES * b, blkB = blkA + rowBytes;
            long packedA = w.get(Layouts.I64, blkA + 4), packedB = w.get(Layouts.I64, blkB + 4);
            int packedHighA = w.get(Layouts.I32, blkA + 12), packedHighB = w.get(Layouts.I32, blkB + 12);
            mins[0] = Layouts.kMins(packedA, packedHighA);
            mins[1] = Layouts.kMins(packedB, packedHighB);
            superBlock2(w, blkA, blkB, Layouts.kScales(packedA, packedHighA), Layouts.kScales(packedB, packedHighB), mins, xs, bs, 256 * b, sums);
            float dy = x.scales[b];
            accA = Math.fma((float) sums[0], Layouts.f16(w, blkA) * dy, accA);
            accB = Math.fma((float) sums[8], Layouts.f16(w, blkB) * dy, accB);
            minA = Math.fma((float) sums[4], Layouts.f16(w, blkA + 2) * dy, minA);
            minB = Math.fma((float) sums[12], Layouts.f16(w, blkB + 2) * dy, minB);
        }
        out[row] = accA - minA;
        out[row + 1] = accB - minB;
    }

    /**
     * The exact Σ scale·(q·y) of one super-block of each of two rows against xs[at0..at0+256) into sums[0] and
     * sums[8], and their exact Σ min·bsum (the rows' unpacked {@link #mins} in mins[0..2)) into sums[4] and
     * sums[12]: its own method (taking and returning no vectors) so that {@link #gemv2} stays within C2's
     * inlining budget.
     */
    private static void superBlock2(MemorySegment w, long blkA, long blkB, long scalesA, long scalesB, long[] mins,
                                    float[] xs, int[] bsums, int at0, int[] sums) {
        FloatVector sumA = FloatVector.zero(F), sumB = sumA;
        for (int p = 0; p < 4; p++) {
            int at = at0 + 64 * p;
            FloatVector x0 = FloatVector.fromArray(F, xs, at), x1 = FloatVector.fromArray(F, xs, at + 16);
            FloatVector x2 = FloatVector.fromArray(F, xs, at + 32), x3 = FloatVector.fromArray(F, xs, at + 48);
            long qsA = blkA + 16 + 32L * p;
            IntVector q0A = (IntVector) ByteVector.fromMemorySegment(B, w, qsA, Simd.LE).convertShape(VectorOperators.B2I, I, 0);
            IntVector q1A = (IntVector) ByteVector.fromMemorySegment(B, w, qsA + 16, Simd.LE).convertShape(VectorOperators.B2I, I, 0);
            FloatVector loA = ((FloatVector) q0A.and(0xF).convert(VectorOperators.I2F, 0)).mul(x0);
            loA = ((FloatVector) q1A.and(0xF).convert(VectorOperators.I2F, 0)).fma(x1, loA);
            FloatVector hiA = ((FloatVector) q0A.lanewise(VectorOperators.LSHR, 4).and(0xF).convert(VectorOperators.I2F, 0)).mul(x2);
            hiA = ((FloatVector) q1A.lanewise(VectorOperators.LSHR, 4).and(0xF).convert(VectorOperators.I2F, 0)).fma(x3, hiA);
            sumA = loA.fma(FloatVector.broadcast(F, (float) ((int) (scalesA >>> 16 * p) & 0xFF)), sumA);
            sumA = hiA.fma(FloatVector.broadcast(F, (float) ((int) (scalesA >>> 16 * p + 8) & 0xFF)), sumA);
            long qsB = blkB + 16 + 32L * p;
            IntVector q0B = (IntVector) ByteVector.fromMemorySegment(B, w, qsB, Simd.LE).convertShape(VectorOperators.B2I, I, 0);
            IntVector q1B = (IntVector) ByteVector.fromMemorySegment(B, w, qsB + 16, Simd.LE).convertShape(VectorOperators.B2I, I, 0);
            FloatVector loB = ((FloatVector) q0B.and(0xF).convert(VectorOperators.I2F, 0)).mul(x0);
            loB = ((FloatVector) q1B.and(0xF).convert(VectorOperators.I2F, 0)).fma(x1, loB);
            FloatVector hiB = ((FloatVector) q0B.lanewise(VectorOperators.LSHR, 4).and(0xF).convert(VectorOperators.I2F, 0)).mul(x2);
            hiB = ((FloatVector) q1B.lanewise(VectorOperators.LSHR, 4).and(0xF).convert(VectorOperators.I2F, 0)).fma(x3, hiB);
            sumB = loB.fma(FloatVector.broadcast(F, (float) ((int) (scalesB >>> 16 * p) & 0xFF)), sumB);
            sumB = hiB.fma(FloatVector.broadcast(F, (float) ((int) (scalesB >>> 16 * p + 8) & 0xFF)), sumB);
        }
        // the mins: lanes 0-7 min_j·bsum32_j of row A, lanes 8-15 of row B (each below 63·32·127, exact)
        FloatVector m = (FloatVector) LongVector.fromArray(L2, mins, 0).reinterpretAsBytes().convertShape(VectorOperators.B2F, F, 0);
        IntVector bs = IntVector.fromArray(I, bsums, at0 / 16);
        FloatVector bs32 = (FloatVector) bs.add(bs.rearrange(I_SWAP1)).rearrange(I_EVENS_TWICE).convert(VectorOperators.I2F, 0);
        m = m.mul(bs32);
        // both rows' lanes and mins summed together, lane 0: row A's sum, 4: A's mins, 8: B's sum, 12: B's mins;
        // sums of up to eight lanes stay below 2^24, the last step is in ints
        FloatVector z = sumA.blend(sumB, F_UPPER_HALF).add(sumB.blend(sumA, F_UPPER_HALF).rearrange(F_SWAP8));
        z = z.add(z.rearrange(F_SWAP4)).blend(m.add(m.rearrange(F_SWAP4)), F_ODD_QUADS);
        IntVector zi = (IntVector) z.add(z.rearrange(F_SWAP2)).convert(VectorOperators.F2I, 0);
        zi.add(zi.rearrange(I_SWAP1)).intoArray(sums, 0);
    }

    private static float gemm(MemorySegment w, long o, Activation x, int n) {
        float[] xs = x.values;
        float acc = 0, accMin = 0;
        FloatVector zero = FloatVector.zero(F);
        for (int b = 0; b < n / 256; b++) {
            long blk = o + BLOCK_BYTES * b;
            long packed = w.get(Layouts.I64, blk + 4);
            int packedHigh = w.get(Layouts.I32, blk + 12);
            long scales = Layouts.kScales(packed, packedHigh), mins = Layouts.kMins(packed, packedHigh);
            float dy = x.scales[b], d = Layouts.f16(w, blk) * dy, dmin = Layouts.f16(w, blk + 2) * dy;
            for (int p = 0; p < 4; p++) {
                long qs = blk + 16 + 32L * p;
                int at = 256 * b + 64 * p;
                IntVector q0 = (IntVector) ByteVector.fromMemorySegment(B, w, qs, Simd.LE).convertShape(VectorOperators.B2I, I, 0);
                IntVector q1 = (IntVector) ByteVector.fromMemorySegment(B, w, qs + 16, Simd.LE).convertShape(VectorOperators.B2I, I, 0);
                FloatVector l0 = (FloatVector) q0.and(0xF).convert(VectorOperators.I2F, 0);
                FloatVector l1 = (FloatVector) q1.and(0xF).convert(VectorOperators.I2F, 0);
                FloatVector h0 = (FloatVector) q0.lanewise(VectorOperators.LSHR, 4).and(0xF).convert(VectorOperators.I2F, 0);
                FloatVector h1 = (FloatVector) q1.lanewise(VectorOperators.LSHR, 4).and(0xF).convert(VectorOperators.I2F, 0);
                FloatVector sl = FloatVector.broadcast(F, (float) ((int) (scales >>> 16 * p) & 0xFF));
                FloatVector sh = FloatVector.broadcast(F, (float) ((int) (scales >>> 16 * p + 8) & 0xFF));
                FloatVector lo, hi;
                FloatVector sum = zero;
                lo = l0.mul(FloatVector.fromArray(F, xs, at));
                lo = l1.fma(FloatVector.fromArray(F, xs, at + 16), lo);
                hi = h0.mul(FloatVector.fromArray(F, xs, at + 32));
                hi = h1.fma(FloatVector.fromArray(F, xs, at + 48), hi);
                sum = hi.fma(sh, lo.fma(sl, sum));
                acc = Math.fma((float) ((IntVector) sum.convert(VectorOperators.F2I, 0)).reduceLanes(VectorOperators.ADD), d, acc);
                int k = 16 * b + 4 * p, minLow = (int) (mins >>> 16 * p) & 0xFF, minHigh = (int) (mins >>> 16 * p + 8) & 0xFF;
                accMin = Math.fma((float) (minLow * (x.bsums[k] + x.bsums[k + 1]) + minHigh * (x.bsums[k + 2] + x.bsums[k + 3])), dmin, accMin);
            }
        }
        return acc - accMin;
    }

    /** Four activations through the GEMV order, each pair's quants converted once for all four. */
    private static void gemv4(MemorySegment w, long o, Activation[] xs, int from, int n, float[][] outs, int row) {
        Activation x0 = xs[from], x1 = xs[from + 1], x2 = xs[from + 2], x3 = xs[from + 3];
        int[] sums = new int[16];
        float[] minSums = new float[16];
        long[] mins = new long[2];
        float acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0, min0 = 0, min1 = 0, min2 = 0, min3 = 0;
        for (int b = 0; b < n / 256; b++) {
            long blk = o + BLOCK_BYTES * b;
            long packed = w.get(Layouts.I64, blk + 4);
            int packedHigh = w.get(Layouts.I32, blk + 12);
            long m = Layouts.kMins(packed, packedHigh);
            mins[0] = Long.expand(m, 0x00FF00FF00FF00FFL) * 0x0101L; // each min twice, as in gemm4
            mins[1] = Long.expand(m >>> 32, 0x00FF00FF00FF00FFL) * 0x0101L;
            superBlock4(w, blk, Layouts.kScales(packed, packedHigh), mins, x0, x1, x2, x3, 256 * b, sums, minSums);
            float d = Layouts.f16(w, blk), dmin = Layouts.f16(w, blk + 2);
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

    /**
     * One super-block against four activations in the GEMV order: the exact Σ scale·(q·y) of activations 0-3
     * at sums[0, 8, 4, 12], their exact Σ min·bsum at minSums[0, 8, 4, 12] ({@code mins}: each min twice, see
     * {@link #gemm4}). Its own method, taking and returning no vectors, to stay within C2's inlining budget.
     */
    private static void superBlock4(MemorySegment w, long blk, long scales, long[] mins,
                                    Activation x0, Activation x1, Activation x2, Activation x3, int at0, int[] sums,
                                    float[] minSums) {
        float[] v0 = x0.values, v1 = x1.values, v2 = x2.values, v3 = x3.values;
        FloatVector s0 = FloatVector.zero(F), s1 = s0, s2 = s0, s3 = s0;
        for (int p = 0; p < 4; p++) {
            long qs = blk + 16 + 32L * p;
            int at = at0 + 64 * p;
            IntVector q0 = (IntVector) ByteVector.fromMemorySegment(B, w, qs, Simd.LE).convertShape(VectorOperators.B2I, I, 0);
            IntVector q1 = (IntVector) ByteVector.fromMemorySegment(B, w, qs + 16, Simd.LE).convertShape(VectorOperators.B2I, I, 0);
            FloatVector l0 = (FloatVector) q0.and(0xF).convert(VectorOperators.I2F, 0);
            FloatVector l1 = (FloatVector) q1.and(0xF).convert(VectorOperators.I2F, 0);
            FloatVector h0 = (FloatVector) q0.lanewise(VectorOperators.LSHR, 4).and(0xF).convert(VectorOperators.I2F, 0);
            FloatVector h1 = (FloatVector) q1.lanewise(VectorOperators.LSHR, 4).and(0xF).convert(VectorOperators.I2F, 0);
            FloatVector sl = FloatVector.broadcast(F, (float) ((int) (scales >>> 16 * p) & 0xFF));
            FloatVector sh = FloatVector.broadcast(F, (float) ((int) (scales >>> 16 * p + 8) & 0xFF));
            FloatVector lo, hi;
            lo = l0.mul(FloatVector.fromArray(F, v0, at));
            lo = l1.fma(FloatVector.fromArray(F, v0, at + 16), lo);
            hi = h0.mul(FloatVector.fromArray(F, v0, at + 32));
            hi = h1.fma(FloatVector.fromArray(F, v0, at + 48), hi);
            s0 = hi.fma(sh, lo.fma(sl, s0));
            lo = l0.mul(FloatVector.fromArray(F, v1, at));
            lo = l1.fma(FloatVector.fromArray(F, v1, at + 16), lo);
            hi = h0.mul(FloatVector.fromArray(F, v1, at + 32));
            hi = h1.fma(FloatVector.fromArray(F, v1, at + 48), hi);
            s1 = hi.fma(sh, lo.fma(sl, s1));
            lo = l0.mul(FloatVector.fromArray(F, v2, at));
            lo = l1.fma(FloatVector.fromArray(F, v2, at + 16), lo);
            hi = h0.mul(FloatVector.fromArray(F, v2, at + 32));
            hi = h1.fma(FloatVector.fromArray(F, v2, at + 48), hi);
            s2 = hi.fma(sh, lo.fma(sl, s2));
            lo = l0.mul(FloatVector.fromArray(F, v3, at));
            lo = l1.fma(FloatVector.fromArray(F, v3, at + 16), lo);
            hi = h0.mul(FloatVector.fromArray(F, v3, at + 32));
            hi = h1.fma(FloatVector.fromArray(F, v3, at + 48), hi);
            s3 = hi.fma(sh, lo.fma(sl, s3));
        }
        // the four lane sums together (see gemm4): sums of up to eight lanes stay below 2^24, the last step in ints
        FloatVector z01 = s0.blend(s1, F_UPPER_HALF).add(s1.blend(s0, F_UPPER_HALF).rearrange(F_SWAP8));
        FloatVector z23 = s2.blend(s3, F_UPPER_HALF).add(s3.blend(s2, F_UPPER_HALF).rearrange(F_SWAP8));
        FloatVector t = z01.blend(z23, F_ODD_QUADS).add(z23.blend(z01, F_ODD_QUADS).rearrange(F_SWAP4));
        IntVector ti = (IntVector) t.add(t.rearrange(F_SWAP2)).convert(VectorOperators.F2I, 0);
        ti.add(ti.rearrange(I_SWAP1)).intoArray(sums, 0);
        // the mins: lane i = min_(i/2) · bsum_i, an activation's sixteen lanes below 2^21 in all, exact
        FloatVector m = (FloatVector) LongVector.fromArray(L2, mins, 0).reinterpretAsBytes().convertShape(VectorOperators.B2F, F, 0);
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

    /** Four activations through the GEMM order (one fold per pair), each pair's quants converted once. */
    private static void gemm4(MemorySegment w, long o, Activation[] xs, int from, int n, float[][] outs, int row) {
        Activation x0 = xs[from], x1 = xs[from + 1], x2 = xs[from + 2], x3 = xs[from + 3];
        float[] sums = new float[128];
        long[] mins = new long[2];
        float acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0, min0 = 0, min1 = 0, min2 = 0, min3 = 0;
        for (int b = 0; b < n / 256; b++) {
            long blk = o + BLOCK_BYTES * b;
            long packed = w.get(Layouts.I64, blk + 4);
            int packedHigh = w.get(Layouts.I32, blk + 12);
            long m = Layouts.kMins(packed, packedHigh);
            // each min twice (bytes 2j and 2j + 1: min j against both 16-value bsums of sub-block j)
            mins[0] = Long.expand(m, 0x00FF00FF00FF00FFL) * 0x0101L;
            mins[1] = Long.expand(m >>> 32, 0x00FF00FF00FF00FFL) * 0x0101L;
            superBlock4Pairs(w, blk, Layouts.kScales(packed, packedHigh), mins, x0, x1, x2, x3, 256 * b, sums);
            float dw = Layouts.f16(w, blk), dminw = Layouts.f16(w, blk + 2);
            float d0 = dw * x0.scales[b], d1 = dw * x1.scales[b], d2 = dw * x2.scales[b], d3 = dw * x3.scales[b];
            float m0 = dminw * x0.scales[b], m1 = dminw * x1.scales[b], m2 = dminw * x2.scales[b], m3 = dminw * x3.scales[b];
            for (int p = 0; p < 4; p++) {
                acc0 = Math.fma(sums[16 * p], d0, acc0);
                acc1 = Math.fma(sums[16 * p + 8], d1, acc1);
                acc2 = Math.fma(sums[16 * p + 4], d2, acc2);
                acc3 = Math.fma(sums[16 * p + 12], d3, acc3);
                min0 = Math.fma(sums[64 + 4 * p], m0, min0);
                min1 = Math.fma(sums[80 + 4 * p], m1, min1);
                min2 = Math.fma(sums[96 + 4 * p], m2, min2);
                min3 = Math.fma(sums[112 + 4 * p], m3, min3);
            }
        }
        outs[from][row] = acc0 - min0;
        outs[from + 1][row] = acc1 - min1;
        outs[from + 2][row] = acc2 - min2;
        outs[from + 3][row] = acc3 - min3;
    }

    /**
     * One super-block against four activations, the GEMM's folds per pair of sub-blocks: pair p's exact
     * Σ scale·(q·y) at sums[16p + 0, 8, 4, 12] (activations 0-3), activation a's pair p of exact Σ min·bsum at
     * sums[64 + 16a + 4p]; {@code mins} holds the eight mins, each twice. Its own method, taking and returning
     * no vectors, to keep {@link #gemm4} within C2's inlining budget.
     */
    private static void superBlock4Pairs(MemorySegment w, long blk, long scales, long[] mins,
                                         Activation x0, Activation x1, Activation x2, Activation x3, int at0, float[] sums) {
        float[] v0 = x0.values, v1 = x1.values, v2 = x2.values, v3 = x3.values;
        FloatVector zero = FloatVector.zero(F);
        for (int p = 0; p < 4; p++) {
            long qs = blk + 16 + 32L * p;
            int at = at0 + 64 * p;
            IntVector q0 = (IntVector) ByteVector.fromMemorySegment(B, w, qs, Simd.LE).convertShape(VectorOperators.B2I, I, 0);
            IntVector q1 = (IntVector) ByteVector.fromMemorySegment(B, w, qs + 16, Simd.LE).convertShape(VectorOperators.B2I, I, 0);
            FloatVector l0 = (FloatVector) q0.and(0xF).convert(VectorOperators.I2F, 0);
            FloatVector l1 = (FloatVector) q1.and(0xF).convert(VectorOperators.I2F, 0);
            FloatVector h0 = (FloatVector) q0.lanewise(VectorOperators.LSHR, 4).and(0xF).convert(VectorOperators.I2F, 0);
            FloatVector h1 = (FloatVector) q1.lanewise(VectorOperators.LSHR, 4).and(0xF).convert(VectorOperators.I2F, 0);
            FloatVector sl = FloatVector.broadcast(F, (float) ((int) (scales >>> 16 * p) & 0xFF));
            FloatVector sh = FloatVector.broadcast(F, (float) ((int) (scales >>> 16 * p + 8) & 0xFF));
            FloatVector lo, hi;
            FloatVector s0 = zero, s1 = zero, s2 = zero, s3 = zero;
            lo = l0.mul(FloatVector.fromArray(F, v0, at));
            lo = l1.fma(FloatVector.fromArray(F, v0, at + 16), lo);
            hi = h0.mul(FloatVector.fromArray(F, v0, at + 32));
            hi = h1.fma(FloatVector.fromArray(F, v0, at + 48), hi);
            s0 = hi.fma(sh, lo.fma(sl, s0));
            lo = l0.mul(FloatVector.fromArray(F, v1, at));
            lo = l1.fma(FloatVector.fromArray(F, v1, at + 16), lo);
            hi = h0.mul(FloatVector.fromArray(F, v1, at + 32));
            hi = h1.fma(FloatVector.fromArray(F, v1, at + 48), hi);
            s1 = hi.fma(sh, lo.fma(sl, s1));
            lo = l0.mul(FloatVector.fromArray(F, v2, at));
            lo = l1.fma(FloatVector.fromArray(F, v2, at + 16), lo);
            hi = h0.mul(FloatVector.fromArray(F, v2, at + 32));
            hi = h1.fma(FloatVector.fromArray(F, v2, at + 48), hi);
            s2 = hi.fma(sh, lo.fma(sl, s2));
            lo = l0.mul(FloatVector.fromArray(F, v3, at));
            lo = l1.fma(FloatVector.fromArray(F, v3, at + 16), lo);
            hi = h0.mul(FloatVector.fromArray(F, v3, at + 32));
            hi = h1.fma(FloatVector.fromArray(F, v3, at + 48), hi);
            s3 = hi.fma(sh, lo.fma(sl, s3));
            // the four pair sums (exact integers below 2^23) summed across lanes together: lanes 0, 8, 4, 12
            FloatVector z01 = s0.blend(s1, F_UPPER_HALF).add(s1.blend(s0, F_UPPER_HALF).rearrange(F_SWAP8));
            FloatVector z23 = s2.blend(s3, F_UPPER_HALF).add(s3.blend(s2, F_UPPER_HALF).rearrange(F_SWAP8));
            FloatVector t = z01.blend(z23, F_ODD_QUADS).add(z23.blend(z01, F_ODD_QUADS).rearrange(F_SWAP4));
            t = t.add(t.rearrange(F_SWAP2));
            t.add(t.rearrange(F_SWAP1)).intoArray(sums, 16 * p);
        }
        minSums4(mins, x0, x1, x2, x3, at0, sums);
    }

    /**
     * The mins' part of a super-block against four activations (activation k's at sums[64 + 16k], exact): lane i =
     * min_(i/2) · bsum_i (below 63·16·127), pair p's sum in lane 4p. Arrays in and out, no vector crossing the call.
     */
    static void minSums4(long[] mins, Activation x0, Activation x1, Activation x2, Activation x3, int at0, float[] sums) {
        FloatVector m = (FloatVector) LongVector.fromArray(L2, mins, 0).reinterpretAsBytes().convertShape(VectorOperators.B2F, F, 0);
        int bs = at0 / 16;
        FloatVector p0 = m.mul((FloatVector) IntVector.fromArray(I, x0.bsums, bs).convert(VectorOperators.I2F, 0));
        FloatVector p1 = m.mul((FloatVector) IntVector.fromArray(I, x1.bsums, bs).convert(VectorOperators.I2F, 0));
        FloatVector p2 = m.mul((FloatVector) IntVector.fromArray(I, x2.bsums, bs).convert(VectorOperators.I2F, 0));
        FloatVector p3 = m.mul((FloatVector) IntVector.fromArray(I, x3.bsums, bs).convert(VectorOperators.I2F, 0));
        p0 = p0.add(p0.rearrange(F_SWAP1));
        p1 = p1.add(p1.rearrange(F_SWAP1));
        p2 = p2.add(p2.rearrange(F_SWAP1));
        p3 = p3.add(p3.rearrange(F_SWAP1));
        p0.add(p0.rearrange(F_SWAP2)).intoArray(sums, 64);
        p1.add(p1.rearrange(F_SWAP2)).intoArray(sums, 80);
        p2.add(p2.rearrange(F_SWAP2)).intoArray(sums, 96);
        p3.add(p3.rearrange(F_SWAP2)).intoArray(sums, 112);
    }
}
