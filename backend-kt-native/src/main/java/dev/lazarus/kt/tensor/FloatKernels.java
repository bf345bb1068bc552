package dev.lazarus.kt.tensor;

import static dev.lazarus.kt.tensor.Simd.F;
import static dev.lazarus.kt.tensor.Simd.L;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

/**
 * The BF16 vector kernel. (F32 and F16 follow ggml's summation order in {@link GgmlFloatKernels}; BF16
 * has no parity requirement yet, as llama-server's test models carry none.)
 */
final class FloatKernels {

    private FloatKernels() {
    }

    static float bf16(MemorySegment w, long o, Activation x, int n) {
        FloatVector acc = FloatVector.zero(F);
        for (int i = 0; i < n; i += L) {
            acc = Simd.bf16s(w, o + 2L * i).fma(FloatVector.fromArray(F, x.values, i), acc);
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }
}
