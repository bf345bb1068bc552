package dev.lazarus.kt.tensor;

/**
 * The fixed horizontal-sum orders of llama-server's x86 CPU backend, for code that must round exactly
 * like it: a sum of floats is only reproducible with the same association.
 */
public final class GgmlSums {

    private GgmlSums() {
    }

    /**
     * 16 lanes summed as GCC expands {@code _mm512_reduce_add_ps}: upper half onto lower half down to
     * four lanes (lane i: (v[12+i] + v[4+i]) + (v[8+i] + v[i])), then (0+2) + (1+3).
     */
    public static float reduce16(float[] v, int off) {
        float t0 = (v[off + 12] + v[off + 4]) + (v[off + 8] + v[off]);
        float t1 = (v[off + 13] + v[off + 5]) + (v[off + 9] + v[off + 1]);
        float t2 = (v[off + 14] + v[off + 6]) + (v[off + 10] + v[off + 2]);
        float t3 = (v[off + 15] + v[off + 7]) + (v[off + 11] + v[off + 3]);
        return (t0 + t2) + (t1 + t3);
    }

    /** 8 lanes summed as ggml's {@code hsum_float_8}: the upper four onto the lower, then (0+2) + (1+3). */
    public static float hsum8(float a0, float a1, float a2, float a3, float a4, float a5, float a6, float a7) {
        float r0 = a4 + a0, r1 = a5 + a1, r2 = a6 + a2, r3 = a7 + a3;
        return (r0 + r2) + (r1 + r3);
    }
}
