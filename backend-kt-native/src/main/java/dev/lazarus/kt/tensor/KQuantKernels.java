package dev.lazarus.kt.tensor;

import static dev.lazarus.kt.tensor.Simd.F;
import static dev.lazarus.kt.tensor.Simd.L;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Vector kernels of the k-quants against a Q8_K activation. Quants are widened to f32 lanes, where
 * products of small integers and their per-lane sums over a block stay exact (below 2^24), so each
 * block's integer sum is what ggml computes; the block scale is applied once per block.
 */
final class KQuantKernels {

    private KQuantKernels() {
    }

    /** Q4_K (qh < 0) and Q5_K (qh = offset of the fifth bits within the block). */
    static float q45k(MemorySegment w, long o, Activation x, int n, int typeSize, int qsAt, int qhAt) {
        float[] xq = x.values;
        FloatVector acc = FloatVector.zero(F);
        float minTerm = 0;
        for (int b = 0; b < n / 256; b++) {
            long blk = o + (long) typeSize * b;
            FloatVector block = FloatVector.zero(F);
            int minSum = 0;
            for (int c = 0; c < 4; c++) {
                FloatVector lowSum = FloatVector.zero(F), highSum = FloatVector.zero(F);
                int xo = 256 * b + 64 * c;
                for (int l = 0; l < 32; l += L) {
                    ByteVector q = Simd.bytes(w, blk + qsAt + 32 * c + l);
                    lowSum = low(q, w, blk + qhAt + l, qhAt, c).fma(FloatVector.fromArray(F, xq, xo + l), lowSum);
                    highSum = high(q, w, blk + qhAt + l, qhAt, c).fma(FloatVector.fromArray(F, xq, xo + 32 + l), highSum);
                }
                block = scaled(block, lowSum, highSum, w, blk + 4, c);
                minSum += mins(w, blk + 4, c, x.bsums, 16 * b + 4 * c);
            }
            float d = x.scales[b];
            acc = Simd.fma(block, Layouts.f16(w, blk) * d, acc);
            minTerm += Layouts.f16(w, blk + 2) * d * minSum;
        }
        return acc.reduceLanes(VectorOperators.ADD) - minTerm;
    }

    /**
     * Four rows of {@link #q45k} at once (rows {@code o + i·stride}): the activation is loaded once
     * for all four and the four sums overlap; per row the operations are exactly those of q45k.
     */
    static void q45kx4(MemorySegment w, long o, long stride, Activation x, int n, int typeSize, int qsAt, int qhAt,
                       float[] out, int at) {
        float[] xq = x.values;
        long o1 = o + stride, o2 = o1 + stride, o3 = o2 + stride;
        FloatVector acc0 = FloatVector.zero(F), acc1 = acc0, acc2 = acc0, acc3 = acc0;
        float min0 = 0, min1 = 0, min2 = 0, min3 = 0;
        for (int b = 0; b < n / 256; b++) {
            long blk = (long) typeSize * b;
            FloatVector bl0 = FloatVector.zero(F), bl1 = bl0, bl2 = bl0, bl3 = bl0;
            int ms0 = 0, ms1 = 0, ms2 = 0, ms3 = 0;
            for (int c = 0; c < 4; c++) {
                FloatVector lo0 = FloatVector.zero(F), lo1 = lo0, lo2 = lo0, lo3 = lo0;
                FloatVector hi0 = lo0, hi1 = lo0, hi2 = lo0, hi3 = lo0;
                int xo = 256 * b + 64 * c;
                for (int l = 0; l < 32; l += L) {
                    FloatVector xl = FloatVector.fromArray(F, xq, xo + l), xh = FloatVector.fromArray(F, xq, xo + 32 + l);
                    long qs = blk + qsAt + 32 * c + l, qh = blk + qhAt + l;
                    ByteVector q0 = Simd.bytes(w, o + qs), q1 = Simd.bytes(w, o1 + qs);
                    ByteVector q2 = Simd.bytes(w, o2 + qs), q3 = Simd.bytes(w, o3 + qs);
                    lo0 = low(q0, w, o + qh, qhAt, c).fma(xl, lo0);
                    hi0 = high(q0, w, o + qh, qhAt, c).fma(xh, hi0);
                    lo1 = low(q1, w, o1 + qh, qhAt, c).fma(xl, lo1);
                    hi1 = high(q1, w, o1 + qh, qhAt, c).fma(xh, hi1);
                    lo2 = low(q2, w, o2 + qh, qhAt, c).fma(xl, lo2);
                    hi2 = high(q2, w, o2 + qh, qhAt, c).fma(xh, hi2);
                    lo3 = low(q3, w, o3 + qh, qhAt, c).fma(xl, lo3);
                    hi3 = high(q3, w, o3 + qh, qhAt, c).fma(xh, hi3);
                }
                long sc = blk + 4;
                int bs = 16 * b + 4 * c;
                bl0 = scaled(bl0, lo0, hi0, w, o + sc, c);
                bl1 = scaled(bl1, lo1, hi1, w, o1 + sc, c);
                bl2 = scaled(bl2, lo2, hi2, w, o2 + sc, c);
                bl3 = scaled(bl3, lo3, hi3, w, o3 + sc, c);
                ms0 += mins(w, o + sc, c, x.bsums, bs);
                ms1 += mins(w, o1 + sc, c, x.bsums, bs);
                ms2 += mins(w, o2 + sc, c, x.bsums, bs);
                ms3 += mins(w, o3 + sc, c, x.bsums, bs);
            }
            float d = x.scales[b];
            acc0 = Simd.fma(bl0, Layouts.f16(w, o + blk) * d, acc0);
            acc1 = Simd.fma(bl1, Layouts.f16(w, o1 + blk) * d, acc1);
            acc2 = Simd.fma(bl2, Layouts.f16(w, o2 + blk) * d, acc2);
            acc3 = Simd.fma(bl3, Layouts.f16(w, o3 + blk) * d, acc3);
            min0 += Layouts.f16(w, o + blk + 2) * d * ms0;
            min1 += Layouts.f16(w, o1 + blk + 2) * d * ms1;
            min2 += Layouts.f16(w, o2 + blk + 2) * d * ms2;
            min3 += Layouts.f16(w, o3 + blk + 2) * d * ms3;
        }
        out[at] = acc0.reduceLanes(VectorOperators.ADD) - min0;
        out[at + 1] = acc1.reduceLanes(VectorOperators.ADD) - min1;
        out[at + 2] = acc2.reduceLanes(VectorOperators.ADD) - min2;
        out[at + 3] = acc3.reduceLanes(VectorOperators.ADD) - min3;
    }

    /** Values 0..31 of a 64-value chunk {@code c}: low nibbles, plus the fifth bit for Q5_K (qhAt ≥ 0). */
    private static FloatVector low(ByteVector q, MemorySegment w, long qh, int qhAt, int c) {
        ByteVector lo = q.and((byte) 0xF);
        if (qhAt >= 0) {
            lo = lo.or(Simd.bytes(w, qh).lanewise(VectorOperators.LSHR, 2 * c).and((byte) 1).lanewise(VectorOperators.LSHL, 4));
        }
        return Simd.bytesToFloats(lo);
    }

    /** Values 32..63 of chunk {@code c}: high nibbles, plus the fifth bit for Q5_K. */
    private static FloatVector high(ByteVector q, MemorySegment w, long qh, int qhAt, int c) {
        ByteVector hi = q.lanewise(VectorOperators.LSHR, 4);
        if (qhAt >= 0) {
            hi = hi.or(Simd.bytes(w, qh).lanewise(VectorOperators.LSHR, 2 * c + 1).and((byte) 1).lanewise(VectorOperators.LSHL, 4));
        }
        return Simd.bytesToFloats(hi);
    }

    /** block + scale(2c)·lowSum + scale(2c+1)·highSum, in that order. */
    private static FloatVector scaled(FloatVector block, FloatVector lowSum, FloatVector highSum, MemorySegment w, long scales, int c) {
        block = Simd.fma(lowSum, Layouts.kScale(w, scales, 2 * c), block);
        return Simd.fma(highSum, Layouts.kScale(w, scales, 2 * c + 1), block);
    }

    /** The chunk's mins times the activation's 16-value sums (exact integers). */
    private static int mins(MemorySegment w, long scales, int c, int[] bsums, int bs) {
        return Layouts.kMin(w, scales, 2 * c) * (bsums[bs] + bsums[bs + 1])
                + Layouts.kMin(w, scales, 2 * c + 1) * (bsums[bs + 2] + bsums[bs + 3]);
    }

    static final RowKernel Q4_K = new RowKernel() {
        @Override
        public float dot(MemorySegment w, long offset, Activation x, int cols) {
            return q45k(w, offset, x, cols, 144, 16, -1);
        }

        @Override
        public void dot4(MemorySegment w, long offset, long stride, Activation x, int cols, float[] out, int at) {
            q45kx4(w, offset, stride, x, cols, 144, 16, -1, out, at);
        }
    };

    static final RowKernel Q5_K = new RowKernel() {
        @Override
        public float dot(MemorySegment w, long offset, Activation x, int cols) {
            return q45k(w, offset, x, cols, 176, 48, 16);
        }

        @Override
        public void dot4(MemorySegment w, long offset, long stride, Activation x, int cols, float[] out, int at) {
            q45kx4(w, offset, stride, x, cols, 176, 48, 16, out, at);
        }
    };

    /**
     * Q6_K: per 128 values, ql holds the low nibbles of four 32-value groups (two groups per byte run)
     * and qh their top two bits (one 2-bit field per group); each 16 values have their own int8 scale.
     */
    static float q6k(MemorySegment w, long o, Activation x, int n) {
        float[] xq = x.values;
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < n / 256; b++) {
            long blk = o + 210L * b;
            long sc = blk + 192;
            FloatVector block = FloatVector.zero(F);
            for (int h = 0; h < 2; h++) {
                int xo = 256 * b + 128 * h;
                for (int l = 0; l < 32; l += L) {
                    block = groups(w, blk + 64 * h + l, blk + 128 + 32 * h + l, sc + 8 * h + l / 16, xq, xo + l, block);
                }
            }
            acc = Simd.fma(block, Layouts.f16(w, blk + 208) * x.scales[b], acc);
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }

    /** Four rows of {@link #q6k} at once; per row the operations are exactly those of q6k. */
    static void q6kx4(MemorySegment w, long o, long stride, Activation x, int n, float[] out, int at) {
        float[] xq = x.values;
        long o1 = o + stride, o2 = o1 + stride, o3 = o2 + stride;
        FloatVector acc0 = FloatVector.zero(F), acc1 = acc0, acc2 = acc0, acc3 = acc0;
        for (int b = 0; b < n / 256; b++) {
            long blk = 210L * b;
            long sc = blk + 192;
            FloatVector bl0 = FloatVector.zero(F), bl1 = bl0, bl2 = bl0, bl3 = bl0;
            for (int h = 0; h < 2; h++) {
                int xo = 256 * b + 128 * h;
                for (int l = 0; l < 32; l += L) {
                    int s = 8 * h + l / 16;
                    long ql = blk + 64 * h + l, qh = blk + 128 + 32 * h + l;
                    bl0 = groups(w, o + ql, o + qh, o + sc + s, xq, xo + l, bl0);
                    bl1 = groups(w, o1 + ql, o1 + qh, o1 + sc + s, xq, xo + l, bl1);
                    bl2 = groups(w, o2 + ql, o2 + qh, o2 + sc + s, xq, xo + l, bl2);
                    bl3 = groups(w, o3 + ql, o3 + qh, o3 + sc + s, xq, xo + l, bl3);
                }
            }
            float d = x.scales[b];
            acc0 = Simd.fma(bl0, Layouts.f16(w, o + blk + 208) * d, acc0);
            acc1 = Simd.fma(bl1, Layouts.f16(w, o1 + blk + 208) * d, acc1);
            acc2 = Simd.fma(bl2, Layouts.f16(w, o2 + blk + 208) * d, acc2);
            acc3 = Simd.fma(bl3, Layouts.f16(w, o3 + blk + 208) * d, acc3);
        }
        out[at] = acc0.reduceLanes(VectorOperators.ADD);
        out[at + 1] = acc1.reduceLanes(VectorOperators.ADD);
        out[at + 2] = acc2.reduceLanes(VectorOperators.ADD);
        out[at + 3] = acc3.reduceLanes(VectorOperators.ADD);
    }

    /** The four groups one position {@code l} of a 128-value half touches, in q6k's order. */
    private static FloatVector groups(MemorySegment w, long ql, long qhAt, long sc, float[] xq, int xo, FloatVector block) {
        ByteVector ql0 = Simd.bytes(w, ql);
        ByteVector ql1 = Simd.bytes(w, ql + 32);
        ByteVector qh = Simd.bytes(w, qhAt);
        block = group(ql0.and((byte) 0xF), qh, 0, xq, xo, Layouts.i8(w, sc), block);
        block = group(ql1.and((byte) 0xF), qh, 2, xq, xo + 32, Layouts.i8(w, sc + 2), block);
        block = group(ql0.lanewise(VectorOperators.LSHR, 4), qh, 4, xq, xo + 64, Layouts.i8(w, sc + 4), block);
        return group(ql1.lanewise(VectorOperators.LSHR, 4), qh, 6, xq, xo + 96, Layouts.i8(w, sc + 6), block);
    }

    static final RowKernel Q6_K = new RowKernel() {
        @Override
        public float dot(MemorySegment w, long offset, Activation x, int cols) {
            return q6k(w, offset, x, cols);
        }

        @Override
        public void dot4(MemorySegment w, long offset, long stride, Activation x, int cols, float[] out, int at) {
            q6kx4(w, offset, stride, x, cols, out, at);
        }
    };

    /** block + scale · (q6 - 32) · x, where q6 = low4 | ((qh >> shift) & 3) << 4. */
    private static FloatVector group(ByteVector low4, ByteVector qh, int shift, float[] xq, int xo, int scale, FloatVector block) {
        ByteVector q = low4.or(qh.lanewise(VectorOperators.LSHR, shift).and((byte) 3).lanewise(VectorOperators.LSHL, 4))
                .sub((byte) 32);
        return Simd.fma(Simd.bytesToFloats(q).mul(FloatVector.fromArray(F, xq, xo)), scale, block);
    }
}
