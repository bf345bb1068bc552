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
