package dev.lazarus.kt.tensor;

import static dev.lazarus.kt.tensor.Simd.F;
import static dev.lazarus.kt.tensor.Simd.L;

import dev.lazarus.kt.gguf.GgmlType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

/**
 * K-quant rows repacked once, at load, into a SIMD-friendly layout: every 4-, 5- or 6-bit quant
 * expanded to its own int8 (in activation order) and the packed 6-bit scales and mins unpacked, so
 * that the kernel is Q8_0's widen-and-fma loop with no bit-field work at all. Taking nibbles and bit
 * fields apart per product is what made the in-place kernels compute-bound at a fraction of memory
 * speed; this layout costs about twice the bytes of Q4_K in RAM (the "RAM-resident repacked" tier)
 * and gives the same sums, operation for operation, as {@link KQuantKernels}.
 *
 * <p>Per 256-value block: Q4_K/Q5_K: 256 quants (0..31), 8 scales and 8 mins (u8), d and dmin (f32)
 * = 280 bytes. Q6_K: 256 quants (q - 32, int8), 16 scales (i8), d (f32) = 276 bytes.
 */
final class ExpandedKQuants {

    static final int Q45K_BLOCK = 280;
    static final int Q6K_BLOCK = 276;
    private static final ValueLayout.OfFloat F32 = Layouts.F32;

    private ExpandedKQuants() {
    }

    static boolean supports(GgmlType type) {
        return type == GgmlType.Q4_K || type == GgmlType.Q5_K || type == GgmlType.Q6_K;
    }

    static long rowBytes(GgmlType type, int cols) {
        return (long) (cols / 256) * (type == GgmlType.Q6_K ? Q6K_BLOCK : Q45K_BLOCK);
    }

    static RowKernel kernel(GgmlType type) {
        return type == GgmlType.Q6_K ? Q6K : Q45K;
    }

    private static final RowKernel Q45K = new RowKernel() {
        @Override
        public float dot(MemorySegment w, long offset, Activation x, int cols) {
            return q45k(w, offset, x, cols);
        }

        @Override
        public void dotVectors4(MemorySegment w, long offset, Activation[] xs, int from, int cols, float[][] outs, int row) {
            q45kv4(w, offset, xs[from], xs[from + 1], xs[from + 2], xs[from + 3], cols, outs, from, row);
        }
    };

    private static final RowKernel Q6K = new RowKernel() {
        @Override
        public float dot(MemorySegment w, long offset, Activation x, int cols) {
            return q6k(w, offset, x, cols);
        }

        @Override
        public void dotVectors4(MemorySegment w, long offset, Activation[] xs, int from, int cols, float[][] outs, int row) {
            q6kv4(w, offset, xs[from], xs[from + 1], xs[from + 2], xs[from + 3], cols, outs, from, row);
        }
    };

    /** Repacks {@code rows × cols} values of {@code type} into a new off-heap segment (freed with the matrix). */
    static MemorySegment expand(GgmlType type, MemorySegment src, int rows, int cols) {
        long blocks = (long) rows * (cols / 256);
        MemorySegment dst = Arena.ofAuto().allocate(blocks * (type == GgmlType.Q6_K ? Q6K_BLOCK : Q45K_BLOCK), 64);
        for (long b = 0; b < blocks; b++) {
            switch (type) {
                case Q4_K -> expandQ45k(src, b * 144, 16, -1, dst, b * Q45K_BLOCK);
                case Q5_K -> expandQ45k(src, b * 176, 48, 16, dst, b * Q45K_BLOCK);
                case Q6_K -> expandQ6k(src, b * 210, dst, b * Q6K_BLOCK);
                default -> throw new IllegalArgumentException("no expanded layout for " + type);
            }
        }
        return dst;
    }

    private static void expandQ45k(MemorySegment s, long blk, int qsAt, int qhAt, MemorySegment d, long out) {
        for (int c = 0; c < 4; c++) {
            for (int l = 0; l < 32; l++) {
                int q = Layouts.u8(s, blk + qsAt + 32 * c + l);
                int h = qhAt >= 0 ? Layouts.u8(s, blk + qhAt + l) : 0;
                d.set(ValueLayout.JAVA_BYTE, out + 64 * c + l, (byte) ((q & 0xF) | ((h >> (2 * c)) & 1) << 4));
                d.set(ValueLayout.JAVA_BYTE, out + 64 * c + 32 + l, (byte) ((q >> 4) | ((h >> (2 * c + 1)) & 1) << 4));
            }
        }
        for (int j = 0; j < 8; j++) {
            d.set(ValueLayout.JAVA_BYTE, out + 256 + j, (byte) Layouts.kScale(s, blk + 4, j));
            d.set(ValueLayout.JAVA_BYTE, out + 264 + j, (byte) Layouts.kMin(s, blk + 4, j));
        }
        d.set(F32, out + 272, Layouts.f16(s, blk));
        d.set(F32, out + 276, Layouts.f16(s, blk + 2));
    }

    private static void expandQ6k(MemorySegment s, long blk, MemorySegment d, long out) {
        for (int h = 0; h < 2; h++) {
            for (int l = 0; l < 32; l++) {
                int ql0 = Layouts.u8(s, blk + 64 * h + l), ql1 = Layouts.u8(s, blk + 64 * h + 32 + l);
                int qh = Layouts.u8(s, blk + 128 + 32 * h + l);
                long at = out + 128 * h + l;
                d.set(ValueLayout.JAVA_BYTE, at, (byte) (((ql0 & 0xF) | (qh & 3) << 4) - 32));
                d.set(ValueLayout.JAVA_BYTE, at + 32, (byte) (((ql1 & 0xF) | ((qh >> 2) & 3) << 4) - 32));
                d.set(ValueLayout.JAVA_BYTE, at + 64, (byte) (((ql0 >> 4) | ((qh >> 4) & 3) << 4) - 32));
                d.set(ValueLayout.JAVA_BYTE, at + 96, (byte) (((ql1 >> 4) | ((qh >> 6) & 3) << 4) - 32));
            }
        }
        MemorySegment.copy(s, blk + 192, d, out + 256, 16);
        d.set(F32, out + 272, Layouts.f16(s, blk + 208));
    }

    /** Q4_K/Q5_K: per 32-value sub-block Σq·x, times its scale, summed in sub-block order (as q45k). */
    static float q45k(MemorySegment w, long o, Activation x, int n) {
        float[] xq = x.values;
        FloatVector acc = FloatVector.zero(F);
        float minTerm = 0;
        for (int b = 0; b < n / 256; b++) {
            long blk = o + (long) Q45K_BLOCK * b;
            FloatVector block = FloatVector.zero(F);
            for (int j = 0; j < 8; j++) {
                FloatVector sum = FloatVector.zero(F);
                for (int l = 0; l < 32; l += L) {
                    sum = Simd.bytesToFloats(Simd.bytes(w, blk + 32 * j + l)).fma(FloatVector.fromArray(F, xq, 256 * b + 32 * j + l), sum);
                }
                block = Simd.fma(sum, Layouts.u8(w, blk + 256 + j), block);
            }
            int minSum = 0;
            for (int j = 0; j < 8; j++) {
                minSum += Layouts.u8(w, blk + 264 + j) * (x.bsums[16 * b + 2 * j] + x.bsums[16 * b + 2 * j + 1]);
            }
            float d = x.scales[b];
            acc = Simd.fma(block, w.get(F32, blk + 272) * d, acc);
            minTerm += w.get(F32, blk + 276) * d * minSum;
        }
        return acc.reduceLanes(VectorOperators.ADD) - minTerm;
    }

    /** Q6_K: per 16 values scale·(Σ (q-32)·x), in the group order of q6k. */
    static float q6k(MemorySegment w, long o, Activation x, int n) {
        float[] xq = x.values;
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < n / 256; b++) {
            long blk = o + (long) Q6K_BLOCK * b;
            FloatVector block = FloatVector.zero(F);
            for (int h = 0; h < 2; h++) {
                for (int l = 0; l < 32; l += L) {
                    for (int g = 0; g < 4; g++) {
                        int pos = 128 * h + 32 * g + l;
                        FloatVector p = Simd.bytesToFloats(Simd.bytes(w, blk + pos)).mul(FloatVector.fromArray(F, xq, 256 * b + pos));
                        block = Simd.fma(p, Layouts.i8(w, blk + 256 + 8 * h + l / 16 + 2 * g), block);
                    }
                }
            }
            acc = Simd.fma(block, w.get(F32, blk + 272) * x.scales[b], acc);
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }

    /** One row of {@link #q45k} against four activations: each weight chunk widened once; per pair exactly q45k. */
    static void q45kv4(MemorySegment w, long o, Activation x0, Activation x1, Activation x2, Activation x3, int n,
                       float[][] outs, int from, int row) {
        FloatVector acc0 = FloatVector.zero(F), acc1 = acc0, acc2 = acc0, acc3 = acc0;
        float m0 = 0, m1 = 0, m2 = 0, m3 = 0;
        for (int b = 0; b < n / 256; b++) {
            long blk = o + (long) Q45K_BLOCK * b;
            FloatVector bl0 = FloatVector.zero(F), bl1 = bl0, bl2 = bl0, bl3 = bl0;
            for (int j = 0; j < 8; j++) {
                FloatVector s0 = FloatVector.zero(F), s1 = s0, s2 = s0, s3 = s0;
                for (int l = 0; l < 32; l += L) {
                    FloatVector q = Simd.bytesToFloats(Simd.bytes(w, blk + 32 * j + l));
                    int at = 256 * b + 32 * j + l;
                    s0 = q.fma(FloatVector.fromArray(F, x0.values, at), s0);
                    s1 = q.fma(FloatVector.fromArray(F, x1.values, at), s1);
                    s2 = q.fma(FloatVector.fromArray(F, x2.values, at), s2);
                    s3 = q.fma(FloatVector.fromArray(F, x3.values, at), s3);
                }
                float sc = Layouts.u8(w, blk + 256 + j);
                bl0 = Simd.fma(s0, sc, bl0);
                bl1 = Simd.fma(s1, sc, bl1);
                bl2 = Simd.fma(s2, sc, bl2);
                bl3 = Simd.fma(s3, sc, bl3);
            }
            float d = w.get(F32, blk + 272), dmin = w.get(F32, blk + 276);
            acc0 = Simd.fma(bl0, d * x0.scales[b], acc0);
            acc1 = Simd.fma(bl1, d * x1.scales[b], acc1);
            acc2 = Simd.fma(bl2, d * x2.scales[b], acc2);
            acc3 = Simd.fma(bl3, d * x3.scales[b], acc3);
            m0 += dmin * x0.scales[b] * minSum(w, blk, x0.bsums, b);
            m1 += dmin * x1.scales[b] * minSum(w, blk, x1.bsums, b);
            m2 += dmin * x2.scales[b] * minSum(w, blk, x2.bsums, b);
            m3 += dmin * x3.scales[b] * minSum(w, blk, x3.bsums, b);
        }
        outs[from][row] = acc0.reduceLanes(VectorOperators.ADD) - m0;
        outs[from + 1][row] = acc1.reduceLanes(VectorOperators.ADD) - m1;
        outs[from + 2][row] = acc2.reduceLanes(VectorOperators.ADD) - m2;
        outs[from + 3][row] = acc3.reduceLanes(VectorOperators.ADD) - m3;
    }

    /** Σ min_j · (16-value sums of sub-block j), an exact integer (scalar only: safe to leave out of line). */
    private static int minSum(MemorySegment w, long blk, int[] bsums, int b) {
        int sum = 0;
        for (int j = 0; j < 8; j++) {
            sum += Layouts.u8(w, blk + 264 + j) * (bsums[16 * b + 2 * j] + bsums[16 * b + 2 * j + 1]);
        }
        return sum;
    }

    /** One row of {@link #q6k} against four activations: each weight chunk widened once; per pair exactly q6k. */
    static void q6kv4(MemorySegment w, long o, Activation x0, Activation x1, Activation x2, Activation x3, int n,
                      float[][] outs, int from, int row) {
        FloatVector acc0 = FloatVector.zero(F), acc1 = acc0, acc2 = acc0, acc3 = acc0;
        for (int b = 0; b < n / 256; b++) {
            long blk = o + (long) Q6K_BLOCK * b;
            FloatVector bl0 = FloatVector.zero(F), bl1 = bl0, bl2 = bl0, bl3 = bl0;
            for (int h = 0; h < 2; h++) {
                for (int l = 0; l < 32; l += L) {
                    for (int g = 0; g < 4; g++) {
                        int pos = 128 * h + 32 * g + l;
                        FloatVector q = Simd.bytesToFloats(Simd.bytes(w, blk + pos));
                        float sc = Layouts.i8(w, blk + 256 + 8 * h + l / 16 + 2 * g);
                        int at = 256 * b + pos;
                        bl0 = Simd.fma(q.mul(FloatVector.fromArray(F, x0.values, at)), sc, bl0);
                        bl1 = Simd.fma(q.mul(FloatVector.fromArray(F, x1.values, at)), sc, bl1);
                        bl2 = Simd.fma(q.mul(FloatVector.fromArray(F, x2.values, at)), sc, bl2);
                        bl3 = Simd.fma(q.mul(FloatVector.fromArray(F, x3.values, at)), sc, bl3);
                    }
                }
            }
            float d = w.get(F32, blk + 272);
            acc0 = Simd.fma(bl0, d * x0.scales[b], acc0);
            acc1 = Simd.fma(bl1, d * x1.scales[b], acc1);
            acc2 = Simd.fma(bl2, d * x2.scales[b], acc2);
            acc3 = Simd.fma(bl3, d * x3.scales[b], acc3);
        }
        outs[from][row] = acc0.reduceLanes(VectorOperators.ADD);
        outs[from + 1][row] = acc1.reduceLanes(VectorOperators.ADD);
        outs[from + 2][row] = acc2.reduceLanes(VectorOperators.ADD);
        outs[from + 3][row] = acc3.reduceLanes(VectorOperators.ADD);
    }
}
