package dev.lazarus.kt.model;

/**
 * How a gated FFN makes its hidden vector from the gate and up products, and the biases around its three
 * products (gpt-oss has them on every expert; everything else has none).
 *
 * @param gateBias added to the gate product row by row before the activation, null for none
 * @param upBias   added to the up product, null for none
 * @param downBias added to the down product (the FFN's output), null for none
 */
public record Glu(Kind kind, float[] gateBias, float[] upBias, float[] downBias) {

    public enum Kind {
        /** {@code silu(gate) · up}. */
        SWIGLU,
        /**
         * gpt-oss's {@code swiglu_oai}: {@code g = min(gate, 7)}, {@code u = clamp(up, -7, 7)},
         * {@code g / (1 + exp(-1.702 g)) · (u + 1)}, with llama.cpp's constants.
         */
        SWIGLU_OAI
    }

    /** Plain SwiGLU without biases. */
    public static final Glu SWIGLU = new Glu(Kind.SWIGLU, null, null, null);

    private static final float OAI_ALPHA = 1.702f;
    private static final float OAI_LIMIT = 7.0f;

    /** Whether this is {@link #SWIGLU}: what kernels that know only that (the GPU tier) can run. */
    public boolean isPlain() {
        return kind == Kind.SWIGLU && gateBias == null && upBias == null && downBias == null;
    }

    /**
     * Hidden value {@code r} of a row of {@code n} from the gate and up products (biases not yet added), rounded as
     * ggml rounds it: SiLU by ggml's vector or scalar path ({@link Numerics#silu(float, int, int)}); swiglu_oai in
     * ggml's scalar loop with the C library's {@code expf}.
     */
    float hidden(float gate, float up, int r, int n) {
        if (gateBias != null) {
            gate += gateBias[r];
        }
        if (upBias != null) {
            up += upBias[r];
        }
        if (kind == Kind.SWIGLU) {
            return Numerics.silu(gate, r, n) * up;
        }
        // std::min(gate, limit) and std::clamp(up, -limit, limit), as written in ggml (NaN passes through the same way)
        float x = OAI_LIMIT < gate ? OAI_LIMIT : gate;
        float y = up < -OAI_LIMIT ? -OAI_LIMIT : (OAI_LIMIT < up ? OAI_LIMIT : up);
        float glu = x / (1.0f + Libm.exp(OAI_ALPHA * -x));
        return glu * (y + 1.0f);
    }

    /** Adds the down bias to rows {@code [from, to)} of an output vector. */
    void addDownBias(float[] out, int from, int to) {
        if (downBias != null) {
            for (int r = from; r < to; r++) {
                out[r] += downBias[r];
            }
        }
    }
}
