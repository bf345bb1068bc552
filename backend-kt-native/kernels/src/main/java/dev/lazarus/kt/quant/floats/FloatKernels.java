package dev.lazarus.kt.quant.floats;

import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.GgmlOrders;
import dev.lazarus.kt.tensor.GgmlSums;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.RowKernel;
import dev.lazarus.kt.tensor.Simd;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * BF16 weight rows dotted with a BF16 activation in the order of llama-server's CPU backend ({@code ggml_vec_dot_bf16};
 * F32 and F16 are in {@link GgmlFloatKernels}), in either of its AVX-512 forms ({@link GgmlOrders}). With
 * AVX512_BF16 ({@link #bf16}): two 16-lane accumulators over
 * 64-value steps, c1 taking values 0-31 and c2 values 32-63 of each step through {@code vdpbf16ps}, which adds to lane
 * l the product of the odd value 2l + 1 and then of the even value 2l (bf16 products are exact in f32, so each add is
 * one {@code fma}); each accumulator summed as GCC expands {@code _mm512_reduce_add_ps} ({@link GgmlSums#reduce16})
 * into a double, the tail past a multiple of 64 added one f32 product at a time, the double rounded to f32 at the end.
 * ({@code vdpbf16ps} also flushes subnormal inputs and results to zero, which no weight or activation of a real model
 * reaches; fma does not.) Without it ({@link #bf16Avx512}): two 16-lane accumulators over 32-value steps, c1 taking
 * values 0-15 and c2 values 16-31 (a bf16 product is exact in f32, so multiply-then-add is one fma), reduced alike.
 */
public final class FloatKernels {

    private static final VectorSpecies<Float> S16 = FloatVector.SPECIES_512;
    private static final VectorSpecies<Integer> I16 = IntVector.SPECIES_512;
    /** Lane l takes value 2l (resp. 2l + 1) of the 32 values held by two 16-lane vectors. */
    private static final FloatVector EVEN = FloatVector.fromArray(S16, indexes(0), 0);
    private static final FloatVector ODD = FloatVector.fromArray(S16, indexes(1), 0);
    private static final ThreadLocal<float[]> SCRATCH = ThreadLocal.withInitial(() -> new float[32]);

    private FloatKernels() {
    }

    private static float[] indexes(int first) {
        float[] ix = new float[16];
        for (int l = 0; l < 16; l++) {
            ix[l] = first + 2 * l;
        }
        return ix;
    }

    static float bf16(MemorySegment w, long o, Activation x, int n) {
        float[] xs = x.values;
        FloatVector c1 = FloatVector.zero(S16), c2 = c1;
        int i = 0;
        for (; i + 64 <= n; i += 64) {
            c1 = dotPairs(w, o, xs, i, c1);
            c2 = dotPairs(w, o, xs, i + 32, c2);
        }
        float[] lanes = SCRATCH.get();
        c1.intoArray(lanes, 0);
        c2.intoArray(lanes, 16);
        return finish(lanes, w, o, xs, i, n);
    }

    /** The BF16 kernel of {@code orders}. */
    public static RowKernel bf16Kernel(GgmlOrders orders) {
        return orders == GgmlOrders.AVX512 ? FloatKernels::bf16Avx512 : FloatKernels::bf16;
    }

    static float bf16Avx512(MemorySegment w, long o, Activation x, int n) {
        float[] xs = x.values;
        FloatVector c1 = FloatVector.zero(S16), c2 = c1;
        int i = 0;
        for (; i + 32 <= n; i += 32) {
            c1 = bf16s(w, o + 2L * i).fma(FloatVector.fromArray(S16, xs, i), c1);
            c2 = bf16s(w, o + 2L * (i + 16)).fma(FloatVector.fromArray(S16, xs, i + 16), c2);
        }
        float[] lanes = SCRATCH.get();
        c1.intoArray(lanes, 0);
        c2.intoArray(lanes, 16);
        return finish(lanes, w, o, xs, i, n);
    }

    /**
     * ggml's end of the BF16 dot: the two accumulators (lanes 0-15 and 16-31 of {@code lanes}) each reduced as
     * {@code _mm512_reduce_add_ps} into a double, then the values from {@code i} one f32 product at a time.
     */
    private static float finish(float[] lanes, MemorySegment w, long o, float[] xs, int i, int n) {
        double sum = GgmlSums.reduce16(lanes, 0);
        sum += GgmlSums.reduce16(lanes, 16);
        for (; i < n; i++) {
            sum += Float.intBitsToFloat(Short.toUnsignedInt(w.get(Layouts.I16, o + 2L * i)) << 16) * xs[i];
        }
        return (float) sum;
    }

    /** 16 bf16 values at byte {@code off} as floats. */
    private static FloatVector bf16s(MemorySegment w, long off) {
        return ((IntVector) ShortVector.fromMemorySegment(ShortVector.SPECIES_256, w, off, Simd.LE)
                .convertShape(VectorOperators.S2I, I16, 0)).lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
    }

    /** One {@code vdpbf16ps}: 32 values from {@code i}, the weights' pairs read as ints (even value low). */
    private static FloatVector dotPairs(MemorySegment w, long o, float[] xs, int i, FloatVector c) {
        IntVector pairs = IntVector.fromMemorySegment(I16, w, o + 2L * i, Simd.LE);
        FloatVector even = pairs.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
        FloatVector odd = pairs.and(0xFFFF0000).reinterpretAsFloats();
        FloatVector lo = FloatVector.fromArray(S16, xs, i), hi = FloatVector.fromArray(S16, xs, i + 16);
        return even.fma(EVEN.selectFrom(lo, hi), odd.fma(ODD.selectFrom(lo, hi), c));
    }
}
