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
            long scales = blk + 4;
            FloatVector block = FloatVector.zero(F);
            int minSum = 0;
            for (int c = 0; c < 4; c++) {
                FloatVector lowSum = FloatVector.zero(F), highSum = FloatVector.zero(F);
                int xo = 256 * b + 64 * c;
                for (int l = 0; l < 32; l += L) {
                    ByteVector q = Simd.bytes(w, blk + qsAt + 32 * c + l);
                    ByteVector lo = q.and((byte) 0xF), hi = q.lanewise(VectorOperators.LSHR, 4);
                    if (qhAt >= 0) {
                        ByteVector h = Simd.bytes(w, blk + qhAt + l);
                        lo = lo.or(h.lanewise(VectorOperators.LSHR, 2 * c).and((byte) 1).lanewise(VectorOperators.LSHL, 4));
                        hi = hi.or(h.lanewise(VectorOperators.LSHR, 2 * c + 1).and((byte) 1).lanewise(VectorOperators.LSHL, 4));
                    }
                    lowSum = Simd.bytesToFloats(lo).fma(FloatVector.fromArray(F, xq, xo + l), lowSum);
                    highSum = Simd.bytesToFloats(hi).fma(FloatVector.fromArray(F, xq, xo + 32 + l), highSum);
                }
                block = Simd.fma(lowSum, Layouts.kScale(w, scales, 2 * c), block);
                block = Simd.fma(highSum, Layouts.kScale(w, scales, 2 * c + 1), block);
                int bs = 16 * b + 4 * c;
                minSum += Layouts.kMin(w, scales, 2 * c) * (x.bsums[bs] + x.bsums[bs + 1])
                        + Layouts.kMin(w, scales, 2 * c + 1) * (x.bsums[bs + 2] + x.bsums[bs + 3]);
            }
            float d = x.scales[b];
            acc = Simd.fma(block, Layouts.f16(w, blk) * d, acc);
            minTerm += Layouts.f16(w, blk + 2) * d * minSum;
        }
        return acc.reduceLanes(VectorOperators.ADD) - minTerm;
    }

    static float q4k(MemorySegment w, long o, Activation x, int n) {
        return q45k(w, o, x, n, 144, 16, -1);
    }

    static float q5k(MemorySegment w, long o, Activation x, int n) {
        return q45k(w, o, x, n, 176, 48, 16);
    }

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
                    ByteVector ql0 = Simd.bytes(w, blk + 64 * h + l);
                    ByteVector ql1 = Simd.bytes(w, blk + 64 * h + 32 + l);
                    ByteVector qh = Simd.bytes(w, blk + 128 + 32 * h + l);
                    int s = 8 * h + l / 16;
                    block = group(ql0.and((byte) 0xF), qh, 0, xq, xo + l, Layouts.i8(w, sc + s), block);
                    block = group(ql1.and((byte) 0xF), qh, 2, xq, xo + 32 + l, Layouts.i8(w, sc + s + 2), block);
                    block = group(ql0.lanewise(VectorOperators.LSHR, 4), qh, 4, xq, xo + 64 + l, Layouts.i8(w, sc + s + 4), block);
                    block = group(ql1.lanewise(VectorOperators.LSHR, 4), qh, 6, xq, xo + 96 + l, Layouts.i8(w, sc + s + 6), block);
                }
            }
            acc = Simd.fma(block, Layouts.f16(w, blk + 208) * x.scales[b], acc);
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }

    /** block + scale · (q6 - 32) · x, where q6 = low4 | ((qh >> shift) & 3) << 4. */
    private static FloatVector group(ByteVector low4, ByteVector qh, int shift, float[] xq, int xo, int scale, FloatVector block) {
        ByteVector q = low4.or(qh.lanewise(VectorOperators.LSHR, shift).and((byte) 3).lanewise(VectorOperators.LSHL, 4))
                .sub((byte) 32);
        return Simd.fma(Simd.bytesToFloats(q).mul(FloatVector.fromArray(F, xq, xo)), scale, block);
    }
}
