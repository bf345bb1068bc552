package dev.lazarus.kt.model;

import dev.lazarus.kt.tensor.GgmlSums;
import dev.lazarus.kt.tensor.NativeKernels;
import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorShuffle;
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
 *
 * <p>The same operations are vectorized across what is independent: the key dots' horizontal sums across 16
 * positions ({@link #keyDots16}), the value dots across outputs with each accumulator slot kept in a register
 * over its positions ({@link #valueColumns}), the softmax across positions. No float differs from the
 * one-product-at-a-time statement of ggml's order (AttentionKernelTest, NumericsTest).
 */
final class AttentionKernel {

    private static final int LANES = 16;
    private static final VectorSpecies<Float> S16 = FloatVector.SPECIES_512;
    /** Folds of {@link #fold}: upper half onto lower, then quarters, pairs and neighbours (see {@link #keyDots16}). */
    private static final VectorMask<Float> HALVES = VectorMask.fromLong(S16, 0xFF00L);
    private static final VectorMask<Float> QUARTERS = VectorMask.fromLong(S16, 0xF0F0L);
    private static final VectorMask<Float> PAIRS = VectorMask.fromLong(S16, 0xCCCCL);
    private static final VectorMask<Float> NEIGHBOURS = VectorMask.fromLong(S16, 0xAAAAL);
    private static final VectorShuffle<Float> SWAP8 = VectorShuffle.fromOp(S16, i -> i ^ 8);
    private static final VectorShuffle<Float> SWAP4 = VectorShuffle.fromOp(S16, i -> i ^ 4);
    private static final VectorShuffle<Float> SWAP2 = VectorShuffle.fromOp(S16, i -> i ^ 2);
    private static final VectorShuffle<Float> SWAP1 = VectorShuffle.fromOp(S16, i -> i ^ 1);
    /** Lane p: the lane of {@link #keyDots16}'s folded vector that holds the sum of its p-th position. */
    private static final VectorShuffle<Float> BY_POSITION = positionOrder();

    /**
     * Per-thread buffers, grown on demand: a decode step attends every head of every layer, and allocating
     * them per head showed in the profile. {@code lanes}: 16 × 16 position sums of the key dots, or 4 × 16 lane
     * vectors of the value dots; {@code acc}: the accumulators of the position-major value dots.
     */
    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    private static final class Scratch {
        float[] query = new float[0], scores = new float[0], acc = new float[0];
        final float[] lanes = new float[4 * LANES * LANES];

        static float[] atLeast(float[] a, int n) {
            return a.length >= n ? a : new float[Math.max(n, 2 * a.length)];
        }
    }

    private AttentionKernel() {}

    /**
     * @param q        query values at {@code qOff}, {@code dim} of them
     * @param keys     position-major F16 keys (their bits); position t's head at {@code t * kStride + kOff}
     * @param values   position-major F16 values (their bits); position t's head at {@code t * vStride + vOff}
     * @param positions how many positions to attend (0..position of the query, inclusive)
     */
    static void attend(float[] q, int qOff, int dim,
                       short[] keys, int kOff, int kStride,
                       short[] values, int vOff, int vStride, int vDim,
                       int positions, float scale, float[] out, int outOff) {
        attend(q, qOff, dim, keys, kOff, kStride, values, vOff, vStride, vDim, 0, positions, scale,
                Float.NEGATIVE_INFINITY, out, outOff);
    }

    /**
     * As below, with keys and values read from a cache's rows: F16 keys and values here, other types through
     * {@link TypedKvAttention}.
     */
    static void attend(float[] q, int qOff, int dim, KvRows keys, int kOff, KvRows values, int vOff, int vDim,
                       int first, int positions, float scale, float sink, float[] out, int outOff) {
        if (keys.type() == KvCacheType.F16 && values.type() == KvCacheType.F16) {
            attend(q, qOff, dim, keys.halves(), kOff, keys.width(), values.halves(), vOff, values.width(), vDim,
                    first, positions, scale, sink, out, outOff);
        } else {
            TypedKvAttention.attend(q, qOff, dim, keys, kOff, values, vOff, vDim, first, positions, scale, sink, out,
                    outOff);
        }
    }

    /**
     * As above, attending only positions {@code [first, positions)} (a sliding window) and with an attention
     * {@code sink} ({@code -inf}: none; see {@link Numerics#softmax(float[], int, float, float)}). The positions
     * before {@code first} stay in the row as llama.cpp's mask leaves them, at {@code -inf}: the softmax's chunks
     * of 16 and the value products' accumulator slots stay aligned to position 0, where llama-server's cache
     * cells are, and those positions add exact zeros.
     */
    static void attend(float[] q, int qOff, int dim,
                       short[] keys, int kOff, int kStride,
                       short[] values, int vOff, int vStride, int vDim,
                       int first, int positions, float scale, float sink, float[] out, int outOff) {
        attend(q, qOff, dim, keys, kOff, kStride, values, vOff, vStride, vDim, first, positions, scale, sink, null,
                out, outOff);
    }

    /**
     * As the first form, attending only the positions {@code keep} marks (null: all): deepseek32's sparse attention,
     * whose other positions llama.cpp's mask sets to -inf, so they stay in the row as exact zeros.
     */
    static void attend(float[] q, int qOff, int dim,
                       short[] keys, int kOff, int kStride,
                       short[] values, int vOff, int vStride, int vDim,
                       int positions, float scale, boolean[] keep, float[] out, int outOff) {
        attend(q, qOff, dim, keys, kOff, kStride, values, vOff, vStride, vDim, 0, positions, scale,
                Float.NEGATIVE_INFINITY, keep, out, outOff);
    }

    private static void attend(float[] q, int qOff, int dim,
                               short[] keys, int kOff, int kStride,
                               short[] values, int vOff, int vStride, int vDim,
                               int first, int positions, float scale, float sink, boolean[] keep,
                               float[] out, int outOff) {
        Scratch s = SCRATCH.get();
        float[] qh = s.query = Scratch.atLeast(s.query, dim);
        for (int i = 0; i < dim; i++) {
            qh[i] = Numerics.roundToF16(q[qOff + i]);
        }
        float[] scores = s.scores = Scratch.atLeast(s.scores, positions);
        keyDots(qh, dim, keys, kOff, kStride, positions, scores, s.lanes);
        Arrays.fill(scores, 0, first, Float.NEGATIVE_INFINITY);
        if (keep != null) {
            for (int t = 0; t < positions; t++) {
                if (!keep[t]) {
                    scores[t] = Float.NEGATIVE_INFINITY;
                }
            }
        }
        Numerics.softmax(scores, positions, scale, sink);
        for (int t = 0; t < positions; t++) {
            scores[t] = Numerics.roundToF16(scores[t]);
        }
        if (vDim % LANES == 0) {
            valueColumns(scores, positions, values, vOff, vStride, vDim, out, outOff, s.lanes);
        } else {
            float[] acc = s.acc = Scratch.atLeast(s.acc, 4 * LANES * vDim);
            Arrays.fill(acc, 0, 4 * LANES * vDim, 0f);
            valueDots(scores, positions, values, vOff, vStride, vDim, out, outOff, acc, s.lanes);
        }
    }

    /** {@code scores[t]} = {@link #keyDot} of the query with position t's key, for t in [0, positions). */
    static void keyDots(float[] q, int dim, short[] keys, int kOff, int kStride, int positions, float[] scores) {
        keyDots(q, dim, keys, kOff, kStride, 0, positions, scores, new float[LANES * LANES]);
    }

    /** As above for t in [from, to) (flash attention's chunks of positions). */
    static void keyDots(float[] q, int dim, short[] keys, int kOff, int kStride, int from, int to, float[] scores) {
        keyDots(q, dim, keys, kOff, kStride, from, to, scores, SCRATCH.get().lanes);
    }

    private static void keyDots(float[] q, int dim, short[] keys, int kOff, int kStride, int positions,
                                float[] scores, float[] lanes) {
        keyDots(q, dim, keys, kOff, kStride, 0, positions, scores, lanes);
    }

    private static void keyDots(float[] q, int dim, short[] keys, int kOff, int kStride, int from, int positions,
                                float[] scores, float[] lanes) {
        if (dim % 64 == 0 && from < positions
                && NativeKernels.f16KeyDots(q, dim, keys, kOff, kStride, from, positions, scores)) {
            return; // the same order with F16C's conversions (lz_flash_avx512.c)
        }
        keyDotsJava(q, dim, keys, kOff, kStride, from, positions, scores, lanes);
    }

    /** {@link #keyDots} in the Vector API (the reference of the native loop). */
    static void keyDotsJava(float[] q, int dim, short[] keys, int kOff, int kStride, int from, int positions,
                            float[] scores, float[] lanes) {
        int t = from;
        if (dim % 64 == 0) {
            for (; t + LANES <= positions; t += LANES) {
                keyDots16(q, dim, keys, t * kStride + kOff, kStride, scores, t, lanes);
            }
        }
        for (; t < positions; t++) {
            scores[t] = keyDot(q, keys, t * kStride + kOff, dim, lanes);
        }
    }

    /**
     * {@link #keyDot} of 16 consecutive positions (the key at {@code at}, then every {@code stride}) into
     * {@code scores[t..t+16)}, for a dimension that is a multiple of 64 (no scalar tail). Each position's
     * accumulators are formed as there (into {@code lanes}, 16 per position); the horizontal sums,
     * {@link GgmlSums#reduce16}'s tree of one vector each, are done for all 16 at once: every fold adds a lane of
     * one position to the lane of the SAME position that reduce16 adds it to (upper half onto lower, quarters,
     * pairs, neighbours), two positions' vectors sharing one vector per fold. Float addition is commutative, so
     * each sum is bit for bit reduce16's; the 16 sums come out in a fixed lane order ({@link #BY_POSITION} puts
     * them back).
     */
    private static void keyDots16(float[] q, int dim, short[] keys, int at, int stride, float[] scores, int t,
                                  float[] lanes) {
        for (int k = 0; k < LANES; k++) {
            keyLanes(q, dim, keys, at + k * stride).intoArray(lanes, k * LANES);
        }
        for (int k = 0; k < 4; k++) {
            foldFour(lanes, 4 * k, k);
        }
        fold(fold(lane(lanes, 0), lane(lanes, 1), PAIRS, SWAP2), fold(lane(lanes, 2), lane(lanes, 3), PAIRS, SWAP2),
                NEIGHBOURS, SWAP1).rearrange(BY_POSITION).intoArray(scores, t);
    }

    /**
     * Vectors {@code from..from+3} of {@code lanes} folded to four lanes each (reduce16's first two steps) into
     * vector {@code to} ({@code to ≤ from}). Loops over methods that take no vectors: the whole tree in one
     * method grows past C2's inlining node limit, and a vector passed to a method that is not inlined is boxed.
     */
    private static void foldFour(float[] lanes, int from, int to) {
        fold(fold(lane(lanes, from), lane(lanes, from + 1), HALVES, SWAP8),
                fold(lane(lanes, from + 2), lane(lanes, from + 3), HALVES, SWAP8), QUARTERS, SWAP4)
                .intoArray(lanes, to * LANES);
    }

    /** One key's four accumulators of {@link #keyDot}, combined (0+2) + (1+3). */
    private static FloatVector keyLanes(float[] q, int dim, short[] keys, int kOff) {
        FloatVector s0 = FloatVector.zero(S16), s1 = s0, s2 = s0, s3 = s0;
        for (int i = 0; i < dim; i += 64) {
            s0 = FloatVector.fromArray(S16, q, i).fma(F16Lanes.load(keys, kOff + i), s0);
            s1 = FloatVector.fromArray(S16, q, i + 16).fma(F16Lanes.load(keys, kOff + i + 16), s1);
            s2 = FloatVector.fromArray(S16, q, i + 32).fma(F16Lanes.load(keys, kOff + i + 32), s2);
            s3 = FloatVector.fromArray(S16, q, i + 48).fma(F16Lanes.load(keys, kOff + i + 48), s3);
        }
        return s0.add(s2).add(s1.add(s3));
    }

    /**
     * One fold of two vectors' horizontal sums: lanes of {@code a} and {@code b} that {@code upper} leaves out
     * get the lane {@code swap} pairs them with added, of {@code a} where the mask is unset and of {@code b}
     * where it is set.
     */
    private static FloatVector fold(FloatVector a, FloatVector b, VectorMask<Float> upper, VectorShuffle<Float> swap) {
        return a.blend(b, upper).add(b.blend(a, upper).rearrange(swap));
    }

    /** Where {@link #keyDots16}'s folds leave each position's sum: found by folding 2^p, exact, for position p. */
    private static VectorShuffle<Float> positionOrder() {
        FloatVector[] v = new FloatVector[LANES];
        for (int p = 0; p < LANES; p++) {
            v[p] = FloatVector.broadcast(S16, (float) (1 << p));
        }
        FloatVector[] quads = new FloatVector[4];
        for (int k = 0; k < 4; k++) {
            quads[k] = fold(fold(v[4 * k], v[4 * k + 1], HALVES, SWAP8), fold(v[4 * k + 2], v[4 * k + 3], HALVES, SWAP8),
                    QUARTERS, SWAP4);
        }
        float[] sums = fold(fold(quads[0], quads[1], PAIRS, SWAP2), fold(quads[2], quads[3], PAIRS, SWAP2),
                NEIGHBOURS, SWAP1).toArray();
        int[] laneOf = new int[LANES];
        for (int lane = 0; lane < LANES; lane++) {
            laneOf[Math.getExponent(sums[lane]) - 4] = lane;
        }
        return VectorShuffle.fromArray(S16, laneOf, 0);
    }

    /**
     * ggml_vec_dot_f16 (AVX-512) of the query with one key: four 16-lane fma accumulators over 64-value
     * steps (one 16-lane vector each: lane-wise fma is the same IEEE operation as the scalar one), combined
     * (0+2) + (1+3), {@link GgmlSums#reduce16}, then the scalar tail past a multiple of 64 in double.
     */
    static float keyDot(float[] q, short[] keys, int kOff, int dim) {
        return keyDot(q, keys, kOff, dim, new float[LANES]);
    }

    private static float keyDot(float[] q, short[] keys, int kOff, int dim, float[] lanes) {
        FloatVector s0 = FloatVector.zero(S16), s1 = s0, s2 = s0, s3 = s0;
        int vectorEnd = dim & -64;
        for (int i = 0; i < vectorEnd; i += 64) {
            s0 = FloatVector.fromArray(S16, q, i).fma(F16Lanes.load(keys, kOff + i), s0);
            s1 = FloatVector.fromArray(S16, q, i + 16).fma(F16Lanes.load(keys, kOff + i + 16), s1);
            s2 = FloatVector.fromArray(S16, q, i + 32).fma(F16Lanes.load(keys, kOff + i + 32), s2);
            s3 = FloatVector.fromArray(S16, q, i + 48).fma(F16Lanes.load(keys, kOff + i + 48), s3);
        }
        s0.add(s2).add(s1.add(s3)).intoArray(lanes, 0);
        double total = GgmlSums.reduce16(lanes, 0);
        for (int i = vectorEnd; i < dim; i++) {
            total += q[i] * F16Lanes.get(keys, kOff + i);
        }
        return (float) total;
    }

    /**
     * out[d] = ggml_vec_dot_f16 of the probabilities with column d of the values, for every d: position t
     * goes into accumulator slot t mod 64 (lane t mod 16 of accumulator (t / 16) mod 4) of each output by fma,
     * as in the one-output form, and the slots are combined (0+2) + (1+3) and {@link GgmlSums#reduce16}-summed
     * (no tail: the padding ggml sums past the real positions adds only exact zeros). Vectorized across outputs,
     * which are independent, so each output keeps ggml's order of operations.
     */
    static void valueDots(float[] p, int positions, short[] values, int vOff, int vStride, int vDim,
                          float[] out, int outOff) {
        if (vDim % LANES == 0) {
            valueColumns(p, positions, values, vOff, vStride, vDim, out, outOff, new float[4 * LANES * LANES]);
        } else {
            valueDots(p, positions, values, vOff, vStride, vDim, out, outOff, new float[4 * LANES * vDim], new float[LANES]);
        }
    }

    /**
     * {@link #valueDots} for vDim a multiple of 16: for each of the 16 lanes l, the four slots l, 16 + l, 32 + l and
     * 48 + l are accumulated in registers over their positions (every 64th, in order, as position order visits
     * them) for 64 outputs at a time ({@link #valueBlock}, then 16 at a time), combined (0+2) + (1+3) and stored
     * as one vector per 16 outputs in {@code lanes}; each group of 16 lane vectors is then reduce16-summed
     * lane-wise ({@link #reduceLanes}), every output column on its own. The same operations as the position-major
     * form, without its accumulators in memory (a load and a store per position and 16 outputs) and with vector
     * instead of scalar reduce16s.
     */
    private static void valueColumns(float[] p, int positions, short[] values, int vOff, int vStride, int vDim,
                                     float[] out, int outOff, float[] lanes) {
        if (NativeKernels.f16ValueDots(p, positions, values, vOff, vStride, vDim, out, outOff)) {
            return; // the same order with F16C's conversions (lz_flash_avx512.c)
        }
        valueColumnsJava(p, positions, values, vOff, vStride, vDim, out, outOff, lanes);
    }

    /** {@link #valueColumns} in the Vector API (the reference of the native loop). */
    static void valueColumnsJava(float[] p, int positions, short[] values, int vOff, int vStride, int vDim,
                                 float[] out, int outOff, float[] lanes) {
        int d = 0;
        for (; d + 4 * LANES <= vDim; d += 4 * LANES) {
            for (int l = 0; l < LANES; l++) {
                valueBlock(p, positions, values, vOff + d, vStride, lanes, l);
            }
            for (int c = 0; c < 4; c++) {
                reduceLanes(lanes, c * LANES, out, outOff + d + c * LANES);
            }
        }
        for (; d < vDim; d += LANES) {
            for (int l = 0; l < LANES; l++) {
                valueColumn(p, positions, values, vOff + d, vStride, lanes, l);
            }
            reduceLanes(lanes, 0, out, outOff + d);
        }
    }

    /**
     * Lane l of slots l, 16 + l, 32 + l, 48 + l for the 64 outputs from {@code column}: four vectors of 16 outputs,
     * each combined (0+2) + (1+3) into vector {@code 16·c + l} of {@code lanes} (c: which 16 outputs).
     */
    private static void valueBlock(float[] p, int positions, short[] values, int column, int vStride, float[] lanes,
                                   int l) {
        FloatVector z = FloatVector.zero(S16);
        FloatVector a0 = z, a1 = z, a2 = z, a3 = z, b0 = z, b1 = z, b2 = z, b3 = z;
        FloatVector c0 = z, c1 = z, c2 = z, c3 = z, d0 = z, d1 = z, d2 = z, d3 = z;
        int t = l;
        // slot l takes positions t, slot 16 + l t + 16, 32 + l t + 32, 48 + l t + 48: the letters a-d; digits: outputs
        for (; t + 3 * LANES < positions; t += 4 * LANES) {
            int row = t * vStride + column;
            FloatVector pv = FloatVector.broadcast(S16, p[t]);
            a0 = pv.fma(F16Lanes.load(values, row), a0);
            a1 = pv.fma(F16Lanes.load(values, row + LANES), a1);
            a2 = pv.fma(F16Lanes.load(values, row + 2 * LANES), a2);
            a3 = pv.fma(F16Lanes.load(values, row + 3 * LANES), a3);
            row += LANES * vStride;
            pv = FloatVector.broadcast(S16, p[t + LANES]);
            b0 = pv.fma(F16Lanes.load(values, row), b0);
            b1 = pv.fma(F16Lanes.load(values, row + LANES), b1);
            b2 = pv.fma(F16Lanes.load(values, row + 2 * LANES), b2);
            b3 = pv.fma(F16Lanes.load(values, row + 3 * LANES), b3);
            row += LANES * vStride;
            pv = FloatVector.broadcast(S16, p[t + 2 * LANES]);
            c0 = pv.fma(F16Lanes.load(values, row), c0);
            c1 = pv.fma(F16Lanes.load(values, row + LANES), c1);
            c2 = pv.fma(F16Lanes.load(values, row + 2 * LANES), c2);
            c3 = pv.fma(F16Lanes.load(values, row + 3 * LANES), c3);
            row += LANES * vStride;
            pv = FloatVector.broadcast(S16, p[t + 3 * LANES]);
            d0 = pv.fma(F16Lanes.load(values, row), d0);
            d1 = pv.fma(F16Lanes.load(values, row + LANES), d1);
            d2 = pv.fma(F16Lanes.load(values, row + 2 * LANES), d2);
            d3 = pv.fma(F16Lanes.load(values, row + 3 * LANES), d3);
        }
        // the last round: slots a, b and c may still have a position (d has none, or the loop would have run)
        if (t < positions) {
            int row = t * vStride + column;
            FloatVector pv = FloatVector.broadcast(S16, p[t]);
            a0 = pv.fma(F16Lanes.load(values, row), a0);
            a1 = pv.fma(F16Lanes.load(values, row + LANES), a1);
            a2 = pv.fma(F16Lanes.load(values, row + 2 * LANES), a2);
            a3 = pv.fma(F16Lanes.load(values, row + 3 * LANES), a3);
        }
        if (t + LANES < positions) {
            int row = (t + LANES) * vStride + column;
            FloatVector pv = FloatVector.broadcast(S16, p[t + LANES]);
            b0 = pv.fma(F16Lanes.load(values, row), b0);
            b1 = pv.fma(F16Lanes.load(values, row + LANES), b1);
            b2 = pv.fma(F16Lanes.load(values, row + 2 * LANES), b2);
            b3 = pv.fma(F16Lanes.load(values, row + 3 * LANES), b3);
        }
        if (t + 2 * LANES < positions) {
            int row = (t + 2 * LANES) * vStride + column;
            FloatVector pv = FloatVector.broadcast(S16, p[t + 2 * LANES]);
            c0 = pv.fma(F16Lanes.load(values, row), c0);
            c1 = pv.fma(F16Lanes.load(values, row + LANES), c1);
            c2 = pv.fma(F16Lanes.load(values, row + 2 * LANES), c2);
            c3 = pv.fma(F16Lanes.load(values, row + 3 * LANES), c3);
        }
        a0.add(c0).add(b0.add(d0)).intoArray(lanes, l * LANES);
        a1.add(c1).add(b1.add(d1)).intoArray(lanes, (LANES + l) * LANES);
        a2.add(c2).add(b2.add(d2)).intoArray(lanes, (2 * LANES + l) * LANES);
        a3.add(c3).add(b3.add(d3)).intoArray(lanes, (3 * LANES + l) * LANES);
    }

    /** As {@link #valueBlock} for the 16 outputs from {@code column} into vector l of {@code lanes}. */
    private static void valueColumn(float[] p, int positions, short[] values, int column, int vStride, float[] lanes,
                                    int l) {
        FloatVector a = FloatVector.zero(S16), b = a, c = a, d = a;
        int t = l;
        for (; t + 3 * LANES < positions; t += 4 * LANES) {
            int row = t * vStride + column;
            a = FloatVector.broadcast(S16, p[t]).fma(F16Lanes.load(values, row), a);
            b = FloatVector.broadcast(S16, p[t + LANES]).fma(F16Lanes.load(values, row + LANES * vStride), b);
            c = FloatVector.broadcast(S16, p[t + 2 * LANES]).fma(F16Lanes.load(values, row + 2 * LANES * vStride), c);
            d = FloatVector.broadcast(S16, p[t + 3 * LANES]).fma(F16Lanes.load(values, row + 3 * LANES * vStride), d);
        }
        if (t < positions) {
            a = FloatVector.broadcast(S16, p[t]).fma(F16Lanes.load(values, t * vStride + column), a);
        }
        if (t + LANES < positions) {
            int u = t + LANES;
            b = FloatVector.broadcast(S16, p[u]).fma(F16Lanes.load(values, u * vStride + column), b);
        }
        if (t + 2 * LANES < positions) {
            int u = t + 2 * LANES;
            c = FloatVector.broadcast(S16, p[u]).fma(F16Lanes.load(values, u * vStride + column), c);
        }
        a.add(c).add(b.add(d)).intoArray(lanes, l * LANES);
    }

    /**
     * Outputs {@code [at, at+16)}: reduce16 of lane vectors {@code first..first+15} of {@code lanes}, lane by lane:
     * (12+4)+(8+0), (13+5)+(9+1), ..., then (0+2)+(1+3).
     */
    private static void reduceLanes(float[] lanes, int first, float[] out, int at) {
        FloatVector t0 = lane(lanes, first + 12).add(lane(lanes, first + 4)).add(lane(lanes, first + 8).add(lane(lanes, first)));
        FloatVector t1 = lane(lanes, first + 13).add(lane(lanes, first + 5)).add(lane(lanes, first + 9).add(lane(lanes, first + 1)));
        FloatVector t2 = lane(lanes, first + 14).add(lane(lanes, first + 6)).add(lane(lanes, first + 10).add(lane(lanes, first + 2)));
        FloatVector t3 = lane(lanes, first + 15).add(lane(lanes, first + 7)).add(lane(lanes, first + 11).add(lane(lanes, first + 3)));
        t0.add(t2).add(t1.add(t3)).intoArray(out, at);
    }

    /** Vector {@code l} of 16 lanes in {@code lanes}. */
    private static FloatVector lane(float[] lanes, int l) {
        return FloatVector.fromArray(S16, lanes, l * LANES);
    }

    /**
     * {@link #valueDots} position by position, for any vDim (used when it is not a multiple of 16): the 64 slots'
     * accumulators of every output in {@code acc} ({@code 4 · 16 · vDim}, zeroed by the caller), 16 lanes of
     * scratch in {@code lanes}.
     */
    private static void valueDots(float[] p, int positions, short[] values, int vOff, int vStride, int vDim,
                                  float[] out, int outOff, float[] acc, float[] lanes) {
        int vectorDims = vDim - vDim % LANES;
        for (int t = 0; t < positions; t++) {
            int slot = ((t / LANES) & 3) * LANES + (t & (LANES - 1));
            float pt = p[t];
            int row = t * vStride + vOff, at = slot * vDim;
            FloatVector pv = FloatVector.broadcast(S16, pt);
            int d = 0;
            for (; d < vectorDims; d += LANES) {
                pv.fma(F16Lanes.load(values, row + d), FloatVector.fromArray(S16, acc, at + d))
                        .intoArray(acc, at + d);
            }
            for (; d < vDim; d++) {
                acc[at + d] = Math.fma(pt, F16Lanes.get(values, row + d), acc[at + d]);
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
