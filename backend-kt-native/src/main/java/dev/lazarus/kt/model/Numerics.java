package dev.lazarus.kt.model;

/**
 * The element-wise maths of the forward pass, written to round like ggml's CPU ops: sums of
 * squares and softmax denominators accumulate in double (ggml_float), everything else is f32.
 * These loops are O(dim) per token; the matrix products, where time goes, live in the kernels.
 */
public final class Numerics {

    private Numerics() {}

    /** {@code out = x / rms(x) * weight} over {@code n} values; {@code weight} may be null (plain normalisation). */
    public static void rmsNorm(float[] x, int off, int n, float[] weight, float eps, float[] out, int outOff) {
        double sum = 0;
        for (int i = 0; i < n; i++) {
            float v = x[off + i];
            sum += (double) (v * v);
        }
        float mean = (float) (sum / n);
        float scale = 1.0f / (float) Math.sqrt(mean + eps);
        for (int i = 0; i < n; i++) {
            float y = x[off + i] * scale;
            out[outOff + i] = weight == null ? y : y * weight[i];
        }
    }

    /** In-place softmax of {@code x[0..n)} after multiplying by {@code scale}. */
    public static void softmax(float[] x, int n, float scale) {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            x[i] *= scale;
            max = Math.max(max, x[i]);
        }
        double sum = 0;
        for (int i = 0; i < n; i++) {
            float e = (float) Math.exp(x[i] - max);
            x[i] = e;
            sum += e;
        }
        float inv = (float) (1.0 / sum);
        for (int i = 0; i < n; i++) {
            x[i] *= inv;
        }
    }

    public static float silu(float x) {
        return x / (1.0f + (float) Math.exp(-x));
    }

    public static float sigmoid(float x) {
        return 1.0f / (1.0f + (float) Math.exp(-x));
    }

    /** The value an F16 cache would hold: round to nearest-even half precision and back. */
    public static float roundToF16(float x) {
        return Float.float16ToFloat(Float.floatToFloat16(x));
    }

    public static void roundToF16(float[] x, int off, int n) {
        for (int i = off; i < off + n; i++) {
            x[i] = roundToF16(x[i]);
        }
    }

    public static void addInPlace(float[] acc, float[] x) {
        for (int i = 0; i < acc.length; i++) {
            acc[i] += x[i];
        }
    }
}
