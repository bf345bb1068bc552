package dev.lazarus.kt.tensor;

import dev.lazarus.kt.gguf.GgmlCodec;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The element-wise and reduction operations of the model, vectorized where it pays. Where ggml
 * accumulates in double (rmsnorm, softmax sums) so do these, to stay within rounding of llama.cpp.
 * All methods work in place on caller-provided arrays and allocate nothing.
 */
public final class FloatOps {

    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;

    private FloatOps() {
    }

    /** f32 rounded to the nearest f16 (ties to even), back in f32. */
    public static float roundF16(float x) {
        return Float.float16ToFloat(Float.floatToFloat16(x));
    }

    /** f32 rounded to the nearest bf16 (ties to even) as ggml does, back in f32. */
    public static float roundBf16(float x) {
        return GgmlCodec.bf16ToF32(GgmlCodec.f32ToBf16(x));
    }

    /** Rounds {@code n} values of {@code x} to f16 in place (as a value stored in an f16 KV cache). */
    public static void roundF16(float[] x, int offset, int n) {
        for (int i = offset; i < offset + n; i++) {
            x[i] = roundF16(x[i]);
        }
    }

    public static void roundBf16(float[] x, int offset, int n) {
        for (int i = offset; i < offset + n; i++) {
            x[i] = roundBf16(x[i]);
        }
    }

    /** Σ a[aOff+i]·b[bOff+i] for i < n. */
    public static float dot(float[] a, int aOff, float[] b, int bOff, int n) {
        FloatVector acc = FloatVector.zero(F);
        int i = 0;
        for (int upper = F.loopBound(n); i < upper; i += F.length()) {
            acc = FloatVector.fromArray(F, a, aOff + i).fma(FloatVector.fromArray(F, b, bOff + i), acc);
        }
        float sum = acc.reduceLanes(VectorOperators.ADD);
        for (; i < n; i++) {
            sum += a[aOff + i] * b[bOff + i];
        }
        return sum;
    }

    public static float dot(float[] a, float[] b, int n) {
        return dot(a, 0, b, 0, n);
    }

    /** y[yOff+i] += alpha·x[xOff+i]. */
    public static void axpy(float alpha, float[] x, int xOff, float[] y, int yOff, int n) {
        int i = 0;
        for (int upper = F.loopBound(n); i < upper; i += F.length()) {
            FloatVector.fromArray(F, x, xOff + i).fma(FloatVector.broadcast(F, alpha), FloatVector.fromArray(F, y, yOff + i)).intoArray(y, yOff + i);
        }
        for (; i < n; i++) {
            y[yOff + i] += alpha * x[xOff + i];
        }
    }

    /** out[i] = a[i] + b[i] (out may be a or b). */
    public static void add(float[] a, float[] b, float[] out, int n) {
        int i = 0;
        for (int upper = F.loopBound(n); i < upper; i += F.length()) {
            FloatVector.fromArray(F, a, i).add(FloatVector.fromArray(F, b, i)).intoArray(out, i);
        }
        for (; i < n; i++) {
            out[i] = a[i] + b[i];
        }
    }

    /** out[i] = a[i]·b[i] (out may be a or b). */
    public static void mul(float[] a, float[] b, float[] out, int n) {
        int i = 0;
        for (int upper = F.loopBound(n); i < upper; i += F.length()) {
            FloatVector.fromArray(F, a, i).mul(FloatVector.fromArray(F, b, i)).intoArray(out, i);
        }
        for (; i < n; i++) {
            out[i] = a[i] * b[i];
        }
    }

    /** x[off+i] *= s. */
    public static void scale(float[] x, int off, int n, float s) {
        int i = 0;
        for (int upper = F.loopBound(n); i < upper; i += F.length()) {
            FloatVector.fromArray(F, x, off + i).mul(s).intoArray(x, off + i);
        }
        for (; i < n; i++) {
            x[off + i] *= s;
        }
    }

    /**
     * RMS norm as ggml: out = x / sqrt(mean(x²) + eps) · weight, with the sum of squares in double.
     * {@code weight} may be null (no scaling). {@code out} may be {@code x}.
     */
    public static void rmsnorm(float[] x, int xOff, float[] weight, float[] out, int outOff, int n, float eps) {
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += x[xOff + i] * x[xOff + i];
        }
        float scale = (float) (1.0 / Math.sqrt((float) (sum / n) + eps));
        int i = 0;
        if (weight != null) {
            for (int upper = F.loopBound(n); i < upper; i += F.length()) {
                FloatVector.fromArray(F, x, xOff + i).mul(scale).mul(FloatVector.fromArray(F, weight, i)).intoArray(out, outOff + i);
            }
        }
        for (; i < n; i++) {
            float v = x[xOff + i] * scale;
            out[outOff + i] = weight != null ? v * weight[i] : v;
        }
    }

    public static void rmsnorm(float[] x, float[] weight, float[] out, int n, float eps) {
        rmsnorm(x, 0, weight, out, 0, n, eps);
    }

    /** In-place softmax of x[off, off+n), sum in double as ggml. */
    public static void softmax(float[] x, int off, int n) {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = off; i < off + n; i++) {
            max = Math.max(max, x[i]);
        }
        double sum = 0;
        for (int i = off; i < off + n; i++) {
            float e = (float) Math.exp(x[i] - max);
            x[i] = e;
            sum += e;
        }
        scale(x, off, n, (float) (1.0 / sum));
    }

    public static float silu(float x) {
        return x / (1 + (float) Math.exp(-x));
    }

    /** x[i] = silu(x[i]) for i < n. */
    public static void silu(float[] x, int n) {
        for (int i = 0; i < n; i++) {
            x[i] = silu(x[i]);
        }
    }

    /** gate[i] = silu(gate[i])·up[i]: the SwiGLU of a gated FFN, fused. */
    public static void swiglu(float[] gate, float[] up, int n) {
        for (int i = 0; i < n; i++) {
            gate[i] = silu(gate[i]) * up[i];
        }
    }
}
