package dev.lazarus.kt.model;

/**
 * Rotary position embedding, computed like ggml's CPU rope: per position a table of cos/sin
 * built by repeated multiplication of theta (in f32, as ggml does, so angles match bit for bit),
 * the C library's {@code cosf}/{@code sinf} of them ({@link Libm}), with YaRN's ramp between
 * interpolated and extrapolated angles and its magnitude correction.
 */
public final class Rope {

    private final RopeConfig config;
    private final float thetaScale;
    private final float corrLow;
    private final float corrHigh;

    public Rope(RopeConfig config) {
        this.config = config;
        int n = config.dimensions();
        this.thetaScale = Libm.pow(config.freqBase(), -2.0f / n);
        float start = (float) Math.floor(corrDim(n, config.originalContext(), config.betaFast(), config.freqBase()));
        float end = (float) Math.ceil(corrDim(n, config.originalContext(), config.betaSlow(), config.freqBase()));
        this.corrLow = Math.max(0, start);
        this.corrHigh = Math.min(n - 1, end);
    }

    public RopeConfig config() {
        return config;
    }

    private static float corrDim(int nDims, int nCtxOrig, float nRot, float base) {
        return nDims * Libm.log(nCtxOrig / (nRot * 2 * (float) Math.PI)) / (2 * Libm.log(base));
    }

    /** cos/sin table for one position: {@code table[i0]} = cos, {@code table[i0+1]} = sin, for even {@code i0 < dimensions}. */
    public float[] table(int position) {
        int n = config.dimensions();
        float[] cache = new float[n];
        float theta = position;
        float freqScale = config.freqScale();
        for (int i0 = 0; i0 < n; i0 += 2) {
            float t = config.extraSection(i0 / 2) ? 0f : theta;
            float thetaInterp = freqScale * t;
            float angle = thetaInterp;
            float mscale = config.attnFactor();
            if (config.extFactor() != 0f) {
                float rampMix = ramp(i0) * config.extFactor();
                // ggml-cpu's rope_yarn, with the multiply-adds GCC fuses in llama-server's build
                angle = Math.fma(thetaInterp, 1 - rampMix, t * rampMix);
                mscale *= Math.fma(0.1f, Libm.log(1.0f / freqScale), 1.0f);
            }
            // the C library's cosf/sinf, as ggml calls them: not correctly rounded, unlike Math's (see Libm)
            cache[i0] = Libm.cos(angle) * mscale;
            cache[i0 + 1] = Libm.sin(angle) * mscale;
            theta *= thetaScale;
        }
        return cache;
    }

    private float ramp(int i0) {
        float y = ((i0 / 2) - corrLow) / Math.max(0.001f, corrHigh - corrLow);
        return 1 - Math.min(1, Math.max(0, y));
    }

    /** Rotates {@code heads} consecutive heads of {@code headSize} floats starting at {@code offset}. */
    public void apply(float[] x, int offset, int heads, int headSize, float[] table) {
        for (int h = 0; h < heads; h++) {
            rotate(x, offset + h * headSize, table);
        }
    }

    /** Rotates the first {@link RopeConfig#dimensions()} values of one head at {@code offset}; the rest pass through. */
    public void rotate(float[] x, int offset, float[] table) {
        rotate(x, offset, table, config.style());
    }

    /** As {@link #rotate(float[], int, float[])} in another pairing (deepseek32's indexer: NeoX beside normal MLA). */
    public void rotate(float[] x, int offset, float[] table, RopeStyle style) {
        int n = config.dimensions();
        if (style == RopeStyle.NORMAL) {
            for (int i0 = 0; i0 < n; i0 += 2) {
                float c = table[i0];
                float s = table[i0 + 1];
                float x0 = x[offset + i0];
                float x1 = x[offset + i0 + 1];
                x[offset + i0] = rotated0(x0, x1, c, s);
                x[offset + i0 + 1] = rotated1(x0, x1, c, s);
            }
        } else {
            int half = n / 2;
            for (int i0 = 0; i0 < n; i0 += 2) {
                int i = i0 / 2;
                float c = table[i0];
                float s = table[i0 + 1];
                float x0 = x[offset + i];
                float x1 = x[offset + i + half];
                x[offset + i] = rotated0(x0, x1, c, s);
                x[offset + i + half] = rotated1(x0, x1, c, s);
            }
        }
    }

    /**
     * {@code x0·cos - x1·sin} as llama-server's build computes it: GCC contracts the expression
     * (-ffp-contract=fast, an FMA target) into one fused multiply-add on the first product.
     */
    static float rotated0(float x0, float x1, float c, float s) {
        return Math.fma(x0, c, -(x1 * s));
    }

    /** {@code x0·sin + x1·cos}, contracted the same way. */
    static float rotated1(float x0, float x1, float c, float s) {
        return Math.fma(x0, s, x1 * c);
    }
}
