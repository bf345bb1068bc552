package dev.lazarus.kt.model;

import dev.lazarus.kt.tensor.GgmlSums;
import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Scaled dot-product attention of one query head over a cached sequence, rounded exactly like
 * llama.cpp's non-flash CPU path (llama-server {@code -fa off}): the query is rounded to F16 to meet the
 * F16 keys, scores and softmax are f32 ({@link Numerics#softmax}), and the probabilities are rounded to
 * F16 before they weight the F16 values (V is multiplied transposed: output d is the dot of the
 * probabilities with column d of the values).
 *
 * <p>Both products are ggml matrix multiplications, summed in {@code ggml_vec_dot_f16}'s order for
 * batches and single tokens alike (Debian's build has no llamafile tinyBLAS): four 16-lane
 * accumulators over 64-value steps, combined (0+2) + (1+3), the lanes summed horizontally into a double,
 * then a scalar tail past a multiple of 64. The masked padding llama-server adds to its KV cache (to a
 * multiple of 256 positions) only adds exact zeros, so the value product sums just the real positions,
 * with no tail.
 */
final class AttentionKernel {

    private static final int LANES = 16;
    private static final VectorSpecies<Float> S16 = FloatVector.SPECIES_512;

    /**
     * Per-thread buffers, grown on demand: a decode step attends every head of every layer, and allocating
     * (and zeroing) the value accumulators, 16 KB per head at 64 values, each time showed in the profile.
     */
    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    private static final class Scratch {
        float[] query = new float[0], scores = new float[0], acc = new float[0];
        final float[] lanes = new float[LANES];

        static float[] atLeast(float[] a, int n) {
            return a.length >= n ? a : new float[Math.max(n, 2 * a.length)];
        }
    }

    private AttentionKernel() {}

    /**
     * @param q        query values at {@code qOff}, {@code dim} of them
     * @param keys     position-major keys; position t's head at {@code t * kStride + kOff}
     * @param values   position-major values; position t's head at {@code t * vStride + vOff}
     * @param positions how many positions to attend (0..position of the query, inclusive)
     */
    static void attend(float[] q, int qOff, int dim,
                       float[] keys, int kOff, int kStride,
                       float[] values, int vOff, int vStride, int vDim,
                       int positions, float scale, float[] out, int outOff) {
        Scratch s = SCRATCH.get();
        float[] qh = s.query = Scratch.atLeast(s.query, dim);
        for (int i = 0; i < dim; i++) {
            qh[i] = Numerics.roundToF16(q[qOff + i]);
        }
        float[] scores = s.scores = Scratch.atLeast(s.scores, positions);
        for (int t = 0; t < positions; t++) {
            scores[t] = keyDot(qh, keys, t * kStride + kOff, dim, s.lanes);
        }
        Numerics.softmax(scores, positions, scale);
        for (int t = 0; t < positions; t++) {
            scores[t] = Numerics.roundToF16(scores[t]);
        }
        float[] acc = s.acc = Scratch.atLeast(s.acc, 4 * LANES * vDim);
        Arrays.fill(acc, 0, 4 * LANES * vDim, 0f);
        valueDots(scores, positions, values, vOff, vStride, vDim, out, outOff, acc, s.lanes);
    }

    /**
     * ggml_vec_dot_f16 (AVX-512) of the query with one key: four 16-lane fma accumulators over 64-value
     * steps (one 16-lane vector each: lane-wise fma is the same IEEE operation as the scalar one), combined
     * (0+2) + (1+3), {@link GgmlSums#reduce16}, then the scalar tail past a multiple of 64 in double.
     */
    static float keyDot(float[] q, float[] keys, int kOff, int dim) {
        return keyDot(q, keys, kOff, dim, new float[LANES]);
    }

    private static float keyDot(float[] q, float[] keys, int kOff, int dim, float[] lanes) {
        FloatVector s0 = FloatVector.zero(S16), s1 = s0, s2 = s0, s3 = s0;
        int vectorEnd = dim & -64;
        for (int i = 0; i < vectorEnd; i += 64) {
            s0 = FloatVector.fromArray(S16, q, i).fma(FloatVector.fromArray(S16, keys, kOff + i), s0);
            s1 = FloatVector.fromArray(S16, q, i + 16).fma(FloatVector.fromArray(S16, keys, kOff + i + 16), s1);
            s2 = FloatVector.fromArray(S16, q, i + 32).fma(FloatVector.fromArray(S16, keys, kOff + i + 32), s2);
            s3 = FloatVector.fromArray(S16, q, i + 48).fma(FloatVector.fromArray(S16, keys, kOff + i + 48), s3);
        }
        s0.add(s2).add(s1.add(s3)).intoArray(lanes, 0);
        double total = GgmlSums.reduce16(lanes, 0);
        for (int i = vectorEnd; i < dim; i++) {
            total += q[i] * keys[kOff + i];
        }
        return (float) total;
    }

    /**
     * out[d] = ggml_vec_dot_f16 of the probabilities with column d of the values, for every d: position t
     * goes into accumulator slot ((t / 16) mod 4, t mod 16) of each output by fma, as in the one-output
     * form, and the slots are combined (0+2) + (1+3) and {@link GgmlSums#reduce16}-summed (no tail: the
     * padding ggml sums past the real positions adds only exact zeros). Vectorized across outputs, which
     * are independent, so each output keeps ggml's order of operations.
     */
    static void valueDots(float[] p, int positions, float[] values, int vOff, int vStride, int vDim,
                          float[] out, int outOff) {
        valueDots(p, positions, values, vOff, vStride, vDim, out, outOff, new float[4 * LANES * vDim], new float[LANES]);
    }

    /** As above with zeroed accumulators ({@code 4 · 16 · vDim} of them) and 16 lanes of scratch from the caller. */
    private static void valueDots(float[] p, int positions, float[] values, int vOff, int vStride, int vDim,
                                  float[] out, int outOff, float[] acc, float[] lanes) {
        int vectorDims = vDim - vDim % LANES;
        for (int t = 0; t < positions; t++) {
            int slot = ((t / LANES) & 3) * LANES + (t & (LANES - 1));
            float pt = p[t];
            int row = t * vStride + vOff, at = slot * vDim;
            FloatVector pv = FloatVector.broadcast(S16, pt);
            int d = 0;
            for (; d < vectorDims; d += LANES) {
                pv.fma(FloatVector.fromArray(S16, values, row + d), FloatVector.fromArray(S16, acc, at + d))
                        .intoArray(acc, at + d);
            }
            for (; d < vDim; d++) {
                acc[at + d] = Math.fma(pt, values[row + d], acc[at + d]);
            }
        }
        for (int d = 0; d < vDim; d++) {
            for (int l = 0; l < LANES; l++) {
                lanes[l] = (acc[l * vDim + d] + acc[(2 * LANES + l) * vDim + d])
                        + (acc[(LANES + l) * vDim + d] + acc[(3 * LANES + l) * vDim + d]);
            }
            out[outOff + d] = GgmlSums.reduce16(lanes, 0);
        }
    }
}
