package dev.lazarus.kt.quant.floats;

import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.GgmlSums;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.Simd;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * F32 and F16 weight rows dotted with an activation in the summation order of llama-server's AVX-512
 * CPU backend, {@code ggml_vec_dot_f32/f16} (Debian's build does not use llamafile's tinyBLAS, so batches
 * take the same path as single tokens): four 16-lane accumulators over 64-value steps (accumulator j
 * takes values 64i+16j..64i+16j+15 by fused multiply-add), combined (0+2) + (1+3), the 16 lanes summed
 * as GCC expands {@code _mm512_reduce_add_ps} ({@link GgmlSums#reduce16}), and a tail past a multiple of 64 added
 * one product at a time (f32: a multiply, then an add). Equal to ggml bit for bit, which matters because F16 activations (and
 * downstream Q8 ones) turn last-bit differences into whole rounding steps. Lane-wise fma is exact IEEE
 * arithmetic in any vector width, so the 16-lane species gives the same bits on any machine.
 */
public final class GgmlFloatKernels {

    private static final VectorSpecies<Float> S16 = FloatVector.SPECIES_512;
    private static final int LANES = 16;
    private static final ThreadLocal<float[]> SCRATCH = ThreadLocal.withInitial(() -> new float[LANES]);

    private GgmlFloatKernels() {
    }

    public static float f32(MemorySegment w, long o, Activation x, int n) {
        return dot(w, o, x, n, false);
    }

    public static float f16(MemorySegment w, long o, Activation x, int n) {
        return dot(w, o, x, n, true);
    }

    private static FloatVector load(MemorySegment w, long o, int i, boolean f16) {
        if (!f16) {
            return FloatVector.fromMemorySegment(S16, w, o + 4L * i, Simd.LE);
        }
        float[] tmp = SCRATCH.get();
        for (int l = 0; l < LANES; l++) {
            tmp[l] = Layouts.f16(w, o + 2L * (i + l));
        }
        return FloatVector.fromArray(S16, tmp, 0);
    }

    private static float dot(MemorySegment w, long o, Activation x, int n, boolean f16) {
        float[] xs = x.values;
        FloatVector s0 = FloatVector.zero(S16), s1 = s0, s2 = s0, s3 = s0;
        int vectorEnd = n & -64;
        for (int i = 0; i < vectorEnd; i += 64) {
            s0 = load(w, o, i, f16).fma(FloatVector.fromArray(S16, xs, i), s0);
            s1 = load(w, o, i + 16, f16).fma(FloatVector.fromArray(S16, xs, i + 16), s1);
            s2 = load(w, o, i + 32, f16).fma(FloatVector.fromArray(S16, xs, i + 32), s2);
            s3 = load(w, o, i + 48, f16).fma(FloatVector.fromArray(S16, xs, i + 48), s3);
        }
        float[] lanes = SCRATCH.get();
        s0.add(s2).add(s1.add(s3)).intoArray(lanes, 0);
        // the tail past a multiple of 64: ggml adds f16 products to a double sum, and f32 ones to a float sum, a
        // multiply then an add (vec.cpp is C++ built as ISO C++, where GCC contracts nothing into an fma; measured:
        // an fma here differs from llama-server in the last bit on FFN widths 172 and 176)
        if (f16) {
            double total = GgmlSums.reduce16(lanes, 0);
            for (int i = vectorEnd; i < n; i++) {
                total += Layouts.f16(w, o + 2L * i) * xs[i];
            }
            return (float) total;
        }
        float total = GgmlSums.reduce16(lanes, 0);
        for (int i = vectorEnd; i < n; i++) {
            total += w.get(Layouts.F32, o + 4L * i) * xs[i];
        }
        return total;
    }
}
