package dev.lazarus.kt.model;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The exponential as llama-server's CPU backend computes it, so that softmax and SiLU round like
 * llama.cpp bit for bit. ggml's AVX-512 build (the zen4 variant llama-server loads here) evaluates
 * {@code exp} 16 lanes at a time with its own polynomial ({@code ggml_v_expf}, adapted from Arm's
 * optimized routines: up to ~1.5 ulp off the true value, so not what {@link Math#exp} gives), and only
 * the leftover tail of a row that is not a multiple of 16 goes through the C library's {@code expf}
 * ({@link Libm}: glibc's is not correctly rounded either). The polynomial below is ggml's, step
 * for step: every multiply-add is an {@link Math#fma}, as the vector code's, and the power of two is
 * applied like {@code vscalefps} (an exact scaling, rounded once).
 */
final class GgmlExp {

    /** Lanes of ggml's AVX-512 vector loops: rows are processed in chunks of this many from index 0. */
    static final int LANES = 16;

    private static final VectorSpecies<Float> S16 = FloatVector.SPECIES_512;
    private static final float SHIFT = 0x1.8p23f;

    private GgmlExp() {}

    /** ggml_v_expf of one lane. */
    static float vexp(float x) {
        float z = Math.fma(x, 0x1.715476p+0f, SHIFT);
        float n = z - SHIFT;
        float b = Math.fma(-n, 0x1.7f7d1cp-20f, Math.fma(-n, 0x1.62e4p-1f, x));
        if (Math.abs(n) > 192) {
            return n <= 0 ? 0f : Float.POSITIVE_INFINITY;
        }
        float u = b * b;
        float j = Math.fma(
                Math.fma(Math.fma(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, Math.fma(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)),
                u,
                Math.fma(0x1.ffffecp-1f, b, 1.0f));
        return Math.scalb(j, (int) n);
    }

    /**
     * {@code x[c..c+16) = vexp(x - max)}: {@link #vexp} in 16 lanes, the same operations lane-wise. A lane whose
     * power of two {@code n} is a normal float (-126..127) gives {@code j · 2^n} rounded once, as {@link Math#scalb};
     * a lane past ggml's saturation ({@code |n| > 192}, a masked -inf among them) gives 0 or infinity; only lanes
     * between (a subnormal result: a probability below 1e-38 in a softmax) or NaN go one by one.
     */
    static void vexpMinus16(float[] x, int c, float max) {
        FloatVector v = FloatVector.fromArray(S16, x, c).sub(max);
        FloatVector n = v.fma(0x1.715476p+0f, SHIFT).sub(SHIFT);
        VectorMask<Float> normal = n.compare(VectorOperators.GE, -126f).and(n.compare(VectorOperators.LE, 127f));
        VectorMask<Float> low = null, high = null;
        if (!normal.allTrue()) {
            low = n.compare(VectorOperators.LT, -192f);
            high = n.compare(VectorOperators.GT, 192f);
            if (!normal.or(low).or(high).allTrue()) {
                for (int l = 0; l < LANES; l++) {
                    x[c + l] = vexp(x[c + l] - max);
                }
                return;
            }
            v = v.blend(0f, normal.not());
            n = n.blend(0f, normal.not());
        }
        FloatVector minusN = n.neg();
        FloatVector b = minusN.fma(FloatVector.broadcast(S16, 0x1.7f7d1cp-20f), minusN.fma(FloatVector.broadcast(S16, 0x1.62e4p-1f), v));
        FloatVector u = b.mul(b);
        FloatVector j = b.fma(0x1.0e4020p-7f, 0x1.573e2ep-5f).fma(u, b.fma(0x1.555e66p-3f, 0x1.fffdb6p-2f))
                .fma(u, b.fma(0x1.ffffecp-1f, 1.0f));
        FloatVector twoToN = ((IntVector) n.convert(VectorOperators.F2I, 0)).add(127)
                .lanewise(VectorOperators.LSHL, 23).reinterpretAsFloats();
        FloatVector result = j.mul(twoToN);
        if (low != null) {
            result = result.blend(0f, low).blend(Float.POSITIVE_INFINITY, high);
        }
        result.intoArray(x, c);
    }

    /** The C library's expf (the scalar tail of ggml's loops). */
    static float libmExp(float x) {
        return Libm.exp(x);
    }

    /** exp of element {@code i} of a row of {@code n}, by whichever path ggml takes for it. */
    static float exp(float x, int i, int n) {
        return i < (n & -LANES) ? vexp(x) : libmExp(x);
    }

    /** x / (1 + exp(-x)), as ggml_v_silu (vector lanes) or ggml_silu_f32 (tail). */
    static float silu(float x, int i, int n) {
        return x / (1.0f + exp(0.0f - x, i, n));
    }
}
