package dev.lazarus.kt.tensor;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.parallel.Parallel;

/**
 * A 2-D weight matrix: {@link #rows()} output features, each row {@link #cols()} contiguous input
 * values (ggml: ne0 = cols, ne1 = rows). Products follow ggml: the activation is first converted to
 * the weight type's {@link VecDotType}. Every method is thread-safe; the range methods allocate
 * nothing once a thread has warmed up.
 */
public interface WeightMatrix {

    int rows();

    int cols();

    GgmlType type();

    /** The form activations take for this matrix. */
    default VecDotType vecDotType() {
        return VecDotType.of(type());
    }

    /** out[r] = dot(row r, x) for r in [rowStart, rowEnd), x converted on the calling thread. */
    void matvec(float[] x, float[] out, int rowStart, int rowEnd);

    /** As {@link #matvec(float[], float[], int, int)} with an activation already converted (reusable across matrices). */
    void matvec(Activation x, float[] out, int rowStart, int rowEnd);

    /** The whole matrix, parallel over rows on {@link Parallel#shared()}. */
    default void matvec(float[] x, float[] out) {
        Activation a = Activation.allocate(vecDotType(), cols()).set(x, cols());
        Parallel.shared().forRange(rows(), (s, e) -> matvec(a, out, s, e));
    }

    /** outs[b][r] = dot(row r, xs[b]) for each vector b and r in range; each weight row is read once for all vectors. */
    void matmul(float[][] xs, float[][] outs, int rowStart, int rowEnd);

    void matmul(Activation[] xs, float[][] outs, int rowStart, int rowEnd);

    /** The whole matrix for several vectors, parallel over rows on {@link Parallel#shared()}. */
    default void matmul(float[][] xs, float[][] outs) {
        Activation[] as = new Activation[xs.length];
        for (int b = 0; b < xs.length; b++) {
            as[b] = Activation.allocate(vecDotType(), cols()).set(xs[b], cols());
        }
        Parallel.shared().forRange(rows(), (s, e) -> matmul(as, outs, s, e));
    }

    /** Writes row {@code row} as f32 into dst[dstOffset, dstOffset + cols). */
    void dequantizeRow(int row, float[] dst, int dstOffset);
}
