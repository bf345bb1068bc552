package dev.lazarus.kt.tensor;

import static dev.lazarus.kt.tensor.Simd.F;
import static dev.lazarus.kt.tensor.Simd.L;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Vector kernels of the float weight types (F32, F16, BF16) and of Q8_0, whose int8 × int8 block
 * sums are exact in f32 lanes (|sum| < 2^24), so it shares their widen-and-fma shape.
 */
final class FloatKernels {

    private FloatKernels() {
    }

    static float f32(MemorySegment w, long o, Activation x, int n) {
        FloatVector acc = FloatVector.zero(F);
        for (int i = 0; i < n; i += L) {
            acc = FloatVector.fromMemorySegment(F, w, o + 4L * i, Simd.LE).fma(FloatVector.fromArray(F, x.values, i), acc);
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }

    static float f16(MemorySegment w, long o, Activation x, int n) {
        FloatVector acc = FloatVector.zero(F);
        for (int i = 0; i < n; i += L) {
            acc = Simd.f16s(w, o + 2L * i).fma(FloatVector.fromArray(F, x.values, i), acc);
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }

    static float bf16(MemorySegment w, long o, Activation x, int n) {
        FloatVector acc = FloatVector.zero(F);
        for (int i = 0; i < n; i += L) {
            acc = Simd.bf16s(w, o + 2L * i).fma(FloatVector.fromArray(F, x.values, i), acc);
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }

    /** Q8_0, with the batched form for prefill. */
    static final RowKernel Q8_0 = new RowKernel() {
        @Override
        public float dot(MemorySegment w, long offset, Activation x, int cols) {
            return q8_0(w, offset, x, cols);
        }

        @Override
        public void dotVectors4(MemorySegment w, long offset, Activation[] xs, int from, int cols, float[][] outs, int row) {
            q8_0v4(w, offset, xs[from], xs[from + 1], xs[from + 2], xs[from + 3], cols, outs, from, row);
        }
    };

    /** One row of {@link #q8_0} against four activations: each weight chunk widened once; per pair exactly q8_0. */
    static void q8_0v4(MemorySegment w, long o, Activation x0, Activation x1, Activation x2, Activation x3, int n,
                       float[][] outs, int from, int row) {
        FloatVector acc0 = FloatVector.zero(F), acc1 = acc0, acc2 = acc0, acc3 = acc0;
        for (int b = 0; b < n / 32; b++) {
            long blk = o + 34L * b;
            FloatVector b0 = FloatVector.zero(F), b1 = b0, b2 = b0, b3 = b0;
            for (int i = 0; i < 32; i += L) {
                FloatVector q = Simd.bytesToFloats(Simd.bytes(w, blk + 2 + i));
                int at = 32 * b + i;
                b0 = q.fma(FloatVector.fromArray(F, x0.values, at), b0);
                b1 = q.fma(FloatVector.fromArray(F, x1.values, at), b1);
                b2 = q.fma(FloatVector.fromArray(F, x2.values, at), b2);
                b3 = q.fma(FloatVector.fromArray(F, x3.values, at), b3);
            }
            float d = Layouts.f16(w, blk);
            acc0 = Simd.fma(b0, d * x0.scales[b], acc0);
            acc1 = Simd.fma(b1, d * x1.scales[b], acc1);
            acc2 = Simd.fma(b2, d * x2.scales[b], acc2);
            acc3 = Simd.fma(b3, d * x3.scales[b], acc3);
        }
        outs[from][row] = acc0.reduceLanes(VectorOperators.ADD);
        outs[from + 1][row] = acc1.reduceLanes(VectorOperators.ADD);
        outs[from + 2][row] = acc2.reduceLanes(VectorOperators.ADD);
        outs[from + 3][row] = acc3.reduceLanes(VectorOperators.ADD);
    }

    static float q8_0(MemorySegment w, long o, Activation x, int n) {
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < n / 32; b++) {
            long blk = o + 34L * b;
            FloatVector block = FloatVector.zero(F);
            for (int i = 0; i < 32; i += L) {
                block = Simd.bytesToFloats(Simd.bytes(w, blk + 2 + i)).fma(FloatVector.fromArray(F, x.values, 32 * b + i), block);
            }
            acc = Simd.fma(block, Layouts.f16(w, blk) * x.scales[b], acc);
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }
}
