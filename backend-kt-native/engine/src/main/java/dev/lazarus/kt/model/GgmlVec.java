package dev.lazarus.kt.model;

import dev.lazarus.kt.tensor.GgmlSums;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * ggml's f32 vector helpers on float arrays, rounded as llama-server's AVX-512 CPU backend rounds them (the recurrent
 * state of a gated DeltaNet is updated by them, token after token, so a last-bit difference would accumulate).
 */
final class GgmlVec {

    private static final VectorSpecies<Float> S16 = FloatVector.SPECIES_512;
    private static final ThreadLocal<float[]> LANES = ThreadLocal.withInitial(() -> new float[16]);

    private GgmlVec() {
    }

    /**
     * {@code ggml_vec_dot_f32}: four 16-lane accumulators over steps of 64 by fused multiply-add, combined
     * (0+2) + (1+3), the lanes summed as {@code _mm512_reduce_add_ps}, then the tail one product at a time.
     */
    static float dot(float[] a, int aOff, float[] b, int bOff, int n) {
        FloatVector s0 = FloatVector.zero(S16), s1 = s0, s2 = s0, s3 = s0;
        int end = n & -64;
        for (int i = 0; i < end; i += 64) {
            s0 = FloatVector.fromArray(S16, a, aOff + i).fma(FloatVector.fromArray(S16, b, bOff + i), s0);
            s1 = FloatVector.fromArray(S16, a, aOff + i + 16).fma(FloatVector.fromArray(S16, b, bOff + i + 16), s1);
            s2 = FloatVector.fromArray(S16, a, aOff + i + 32).fma(FloatVector.fromArray(S16, b, bOff + i + 32), s2);
            s3 = FloatVector.fromArray(S16, a, aOff + i + 48).fma(FloatVector.fromArray(S16, b, bOff + i + 48), s3);
        }
        float[] lanes = LANES.get();
        s0.add(s2).add(s1.add(s3)).intoArray(lanes, 0);
        float sum = GgmlSums.reduce16(lanes, 0);
        for (int i = end; i < n; i++) {
            sum += a[aOff + i] * b[bOff + i];
        }
        return sum;
    }

    /** {@code ggml_vec_mad_f32}: {@code y += x · v}, each element by one fused multiply-add. */
    static void mad(float[] y, int yOff, float[] x, int xOff, float v, int n) {
        FloatVector vv = FloatVector.broadcast(S16, v);
        int i = 0;
        for (int end = n & -16; i < end; i += 16) {
            FloatVector.fromArray(S16, x, xOff + i).fma(vv, FloatVector.fromArray(S16, y, yOff + i)).intoArray(y, yOff + i);
        }
        for (; i < n; i++) {
            y[yOff + i] = Math.fma(x[xOff + i], v, y[yOff + i]);
        }
    }

    /** {@code ggml_vec_scale_f32}: {@code y *= v}. */
    static void scale(float[] y, int yOff, float v, int n) {
        FloatVector vv = FloatVector.broadcast(S16, v);
        int i = 0;
        for (int end = n & -16; i < end; i += 16) {
            FloatVector.fromArray(S16, y, yOff + i).mul(vv).intoArray(y, yOff + i);
        }
        for (; i < n; i++) {
            y[yOff + i] *= v;
        }
    }
}
