package dev.lazarus.kt.model;

import dev.lazarus.kt.tensor.NativeKernels;
import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Attention of one query row, rounded exactly like ggml's CPU {@code flash_attn_ext} (llama-server {@code -fa on}).
 * ggml takes one of three orders, by the shape of the step ({@link #path}):
 * <ul>
 *   <li>{@link Path#ROW} ({@code one_chunk}): the query converted for K's {@code vec_dot} and scored position by
 *       position; an online softmax with the C library's {@code expf}: on a new maximum the accumulator is rescaled
 *       by {@code expf(old - new)}, else the position weighs {@code expf(s - max)}; the sum {@code S = fma(S, ms, vs)};
 *       V added per position ({@link FlashKv#addValue}: F16 V accumulates in F16, every step rounded); the sink
 *       joins last ({@code S·ms + 1} unfused), then one multiply by {@code 1/S}.</li>
 *   <li>{@link Path#TILED} (prompt batches of 64 tokens or more, K and V both F16; {@link FlashTiles}, which also
 *       takes a block of rows at once): tiles of 64 positions from 0;
 *       the query stays F32 and each score is one sequential fma chain over the dimension (ggml's {@code simd_gemm});
 *       per tile the maximum, {@code expf(old - new)} rescaling the F32 accumulator and the F32 sum, then
 *       {@code ggml_vec_soft_max_f32}'s 16-lane exponentials summed in double into the float sum, and V added by an
 *       fma per position in F32; the sink joins by {@code fma(S, ms, vs)}.</li>
 *   <li>{@link Path#SPLIT} (one decode token against 512 or more cache cells, K and V both F16): the cells split in
 *       one chunk per llama-server thread, each a {@link Path#ROW} (the sink in the first), then merged in chunk
 *       order: {@code acc = fma(acc, expf(M - M'), chunk · expf(M_c - M'))}, the sum likewise.</li>
 * </ul>
 * Masked positions (the future, outside a sliding window, the cache's padding to a multiple of 256 cells) are
 * skipped or weigh exact zeros, so only the tile and chunk boundaries, which start at cell 0, show through.
 */
final class FlashAttentionKernel {

    /** ggml's orders; see the class comment. */
    enum Path { ROW, TILED, SPLIT }

    /** {@code GGML_FA_TILE_Q} and {@code GGML_FA_TILE_KV}. */
    static final int TILE = 64;
    /** llama.cpp pads the cells an ubatch attends to a multiple of this. */
    static final int CELL_PADDING = 256;
    /** Cells from which a single-token step splits the cache across threads. */
    static final int SPLIT_MIN_CELLS = 512;

    private static final int LANES = 16;
    private static final VectorSpecies<Float> S16 = FloatVector.SPECIES_512;

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);
    private static final ThreadLocal<FlashTiles.Rows> ONE_ROW = ThreadLocal.withInitial(FlashTiles.Rows::new);

    private static final class Scratch {
        float[] query = new float[0], scores = new float[0], acc = new float[0], partial = new float[0];
        /** One row chunk's kept positions with their rescale ({@code ms}) and weight ({@code vs}). */
        int[] kept = new int[0];
        float[] rescale = new float[0], weight = new float[0];

        static float[] atLeast(float[] a, int n) {
            return a.length >= n ? a : new float[Math.max(n, 2 * a.length)];
        }
    }

    private FlashAttentionKernel() {}

    /**
     * The order ggml takes for a row of an ubatch of {@code ubatchTokens} tokens attending up to {@code positions}
     * cells (its own included): {@code ggml_compute_forward_flash_attn_ext_f16}'s choice, with F16 or F32 K and V of
     * one type as {@code floatRows}. Debian's llama-server takes the tiled order for any value width (measured with
     * heads of 8; later ggml sources also ask for a multiple of the vector width).
     */
    static Path path(int ubatchTokens, int positions, boolean floatRows) {
        if (floatRows && ubatchTokens == 1 && paddedCells(positions) >= SPLIT_MIN_CELLS) {
            return Path.SPLIT;
        }
        return floatRows && ubatchTokens >= TILE ? Path.TILED : Path.ROW;
    }

    /** The cells llama.cpp's graph attends for a sequence of {@code positions}: padded to 256. */
    static int paddedCells(int positions) {
        return Math.max(CELL_PADDING, (positions + CELL_PADDING - 1) / CELL_PADDING * CELL_PADDING);
    }

    /**
     * Attention of the query at {@code q[qOff..qOff+dim)} over positions [first, positions) of {@code kv} (earlier
     * ones outside a sliding window), with an attention {@code sink} ({@code -inf}: none), into
     * {@code out[outOff..outOff+valueDim)}. {@code threads}: llama-server's thread count, which sets the chunks of
     * {@link Path#SPLIT}.
     */
    static void attend(float[] q, int qOff, int dim, FlashKv kv, int first, int positions, float scale, float sink,
                       Path path, int threads, float[] out, int outOff) {
        attend(q, qOff, dim, kv, first, positions, scale, sink, null, path, threads, out, outOff);
    }

    /**
     * As above, attending only the positions {@code keep} marks (null: all): deepseek32's sparse attention, whose
     * other cells llama.cpp's mask sets to -inf, which ggml's flash attention skips (row and split chunks) or weighs
     * by an exact zero (tiles).
     */
    static void attend(float[] q, int qOff, int dim, FlashKv kv, int first, int positions, float scale, float sink,
                       boolean[] keep, Path path, int threads, float[] out, int outOff) {
        if (path == Path.TILED) {
            FlashTiles.Rows rows = ONE_ROW.get();
            rows.clear();
            rows.add(q, qOff, first, positions, keep, sink, out, outOff);
            FlashTiles.attend(kv.floatRows(), dim, kv.valueDim(), scale, rows);
            return;
        }
        Scratch s = SCRATCH.get();
        int vDim = kv.valueDim();
        float[] acc = s.acc = Scratch.atLeast(s.acc, vDim);
        float sum;
        switch (path) {
            case ROW -> {
                s.scores = Scratch.atLeast(s.scores, positions);
                long ms = rowChunk(q, qOff, dim, kv, first, 0, positions, scale, sink, keep, s.scores, acc);
                sum = Float.intBitsToFloat((int) ms);
            }
            case SPLIT -> sum = split(q, qOff, dim, kv, first, positions, scale, sink, keep, threads, s, acc);
            default -> throw new IllegalStateException();
        }
        float inverse = sum == 0 ? 0f : 1f / sum;
        for (int d = 0; d < vDim; d++) {
            out[outOff + d] = acc[d] * inverse;
        }
    }

    /**
     * ggml's {@code one_chunk} over cells [from, to) (positions before {@code first} masked), leaving the F32
     * accumulator in {@code acc}: returns the maximum (high 32 bits) and the sum (low 32 bits) as float bits. The
     * sink joins only in the chunk from cell 0.
     */
    private static long rowChunk(float[] q, int qOff, int dim, FlashKv kv, int first, int from, int to, float scale,
                                 float sink, boolean[] keep, float[] scores, float[] acc) {
        int vDim = kv.valueDim();
        Arrays.fill(acc, 0, vDim, 0f);
        float max = Float.NEGATIVE_INFINITY, sum = 0f;
        int lo = Math.max(first, from);
        if (lo < to) {
            kv.keyDots(q, qOff, dim, lo, to, scores);
        }
        // the online softmax's scalars first, then V in one pass (FlashKv#addValues). The running maximum depends on
        // the scores alone, so every expf argument (old - new on a new maximum, else score - max) is known before any
        // expf: one batched call for the chunk, the same arguments and bits as one call per position
        Scratch s = SCRATCH.get();
        if (s.kept.length < to - lo) {
            int n = Math.max(to - lo, 2 * s.kept.length);
            s.kept = new int[n];
            s.rescale = new float[n];
            s.weight = new float[n];
        }
        int[] kept = s.kept;
        float[] rescale = s.rescale, weight = s.weight;
        int n = 0;
        for (int t = lo; t < to; t++) {
            if (keep != null && !keep[t]) {
                continue; // a -inf mask: ggml's one_chunk skips the cell
            }
            float score = scores[t] * scale;
            if (score > max) {
                rescale[n] = max - score; // the new maximum rescales by expf(old - new)
                max = score;
                kept[n++] = ~t;
            } else {
                rescale[n] = score - max;
                kept[n++] = t;
            }
        }
        Libm.exp(rescale, rescale, n);
        for (int k = 0; k < n; k++) {
            float ms = 1f, vs = 1f;
            if (kept[k] < 0) {
                ms = rescale[k];
                kept[k] = ~kept[k];
            } else {
                vs = rescale[k];
                rescale[k] = 1f;
            }
            weight[k] = vs;
            sum = Math.fma(sum, ms, vs);
        }
        kv.addValues(kept, rescale, weight, n, acc);
        if (sink != Float.NEGATIVE_INFINITY && from == 0) {
            if (sink > max) {
                float ms = Libm.exp(max - sink);
                max = sink;
                scaleAccumulator(acc, vDim, ms, false);
                sum = sum * ms + 1f;
            } else {
                sum += Libm.exp(sink - max);
            }
        }
        return ((long) Float.floatToRawIntBits(max) << 32) | (Float.floatToRawIntBits(sum) & 0xFFFFFFFFL);
    }

    /** ggml_vec_scale_f16 (every value rounded to F16) or ggml_vec_scale_f32. */
    static void scaleAccumulator(float[] acc, int n, float v, boolean f16) {
        if (f16) {
            int d = 0;
            for (; d + LANES <= n; d += LANES) {
                roundToF16(FloatVector.fromArray(S16, acc, d).mul(v)).intoArray(acc, d);
            }
            for (; d < n; d++) {
                acc[d] = Numerics.roundToF16(acc[d] * v);
            }
        } else {
            int d = 0;
            for (; d + LANES <= n; d += LANES) {
                FloatVector.fromArray(S16, acc, d).mul(v).intoArray(acc, d);
            }
            for (; d < n; d++) {
                acc[d] *= v;
            }
        }
    }

    /** The split-KV path: one {@link #rowChunk} per thread's chunk of cells, merged in chunk order; returns the sum. */
    private static float split(float[] q, int qOff, int dim, FlashKv kv, int first, int positions, float scale,
                               float sink, boolean[] keep, int threads, Scratch s, float[] acc) {
        int vDim = kv.valueDim();
        int cells = paddedCells(positions);
        int chunk = (cells + threads - 1) / threads;
        float[] partial = s.partial = Scratch.atLeast(s.partial, vDim);
        float[] scores = s.scores = Scratch.atLeast(s.scores, positions);
        Arrays.fill(acc, 0, vDim, 0f);
        float max = Float.NEGATIVE_INFINITY, sum = 0f;
        for (int c = 0; c < threads; c++) {
            int from = c * chunk;
            if (from >= cells) {
                continue;
            }
            long ms = rowChunk(q, qOff, dim, kv, first, from, Math.min(from + chunk, positions), scale, sink, keep,
                    scores, partial);
            float chunkMax = Float.intBitsToFloat((int) (ms >>> 32)), chunkSum = Float.intBitsToFloat((int) ms);
            if (chunkSum == 0f) {
                continue;
            }
            float newMax = Math.max(max, chunkMax);
            float scaleOld = Libm.exp(max - newMax), scaleNew = Libm.exp(chunkMax - newMax);
            for (int d = 0; d < vDim; d++) {
                acc[d] = Math.fma(acc[d], scaleOld, partial[d] * scaleNew);
            }
            sum = Math.fma(sum, scaleOld, chunkSum * scaleNew);
            max = newMax;
        }
        return sum;
    }

    /** ggml_vec_dot_f16 of the query rounded to F16 with F16 keys at [from, to). */
    static void f16KeyDots(float[] q, int qOff, int dim, FlashKv.FloatRows rows, int from, int to, float[] scores) {
        Scratch s = SCRATCH.get();
        float[] qh = s.query = Scratch.atLeast(s.query, dim);
        for (int i = 0; i < dim; i++) {
            qh[i] = Numerics.roundToF16(q[qOff + i]);
        }
        AttentionKernel.keyDots(qh, dim, rows.keys(), rows.kOff(), rows.kStride(), from, to, scores);
    }

    /** ggml_vec_mad_f16: {@code acc[d] = f16(fma(v[d], w, acc[d]))}, V as F16 bits. */
    static void madF16(float[] acc, short[] v, int vOff, int n, float w) {
        FloatVector wv = FloatVector.broadcast(S16, w);
        int d = 0;
        for (; d + LANES <= n; d += LANES) {
            roundToF16(F16Lanes.load(v, vOff + d).fma(wv, FloatVector.fromArray(S16, acc, d))).intoArray(acc, d);
        }
        for (; d < n; d++) {
            acc[d] = Numerics.roundToF16(Math.fma(F16Lanes.get(v, vOff + d), w, acc[d]));
        }
    }

    /**
     * {@link Numerics#roundToF16} in 16 lanes (the accumulator of the one-row order rounds at every step): the
     * magnitude plus and minus {@code c = 2^(e+13)}, e its exponent clamped to F16's -14..16, rounds it to F16's
     * spacing in its binade (2^(e-10); 2^-24 below 2^-14), to nearest even, in one float addition; past 65504 it is
     * infinite; the sign goes back last, so a value that rounds to zero keeps it. FlashAttentionKernelTest holds it
     * to the scalar conversion.
     */
    static FloatVector roundToF16(FloatVector x) {
        IntVector bits = x.reinterpretAsInts();
        FloatVector c = bits.and(0x7F800000).max((127 - 14) << 23).min((127 + 16) << 23).add(13 << 23)
                .reinterpretAsFloats();
        FloatVector r = x.abs().add(c).sub(c);
        r = r.blend(Float.POSITIVE_INFINITY, r.compare(VectorOperators.GT, 65504f));
        return r.reinterpretAsInts().or(bits.and(0x80000000)).reinterpretAsFloats();
    }

    /**
     * ggml_vec_mad_f16 over the kept positions of a row chunk, with the accumulator in registers across them: per
     * position {@code acc = f16(acc · ms)} where a new maximum rescaled it ({@code ms != 1}; a scale by 1 changes no
     * F16 value), then {@code acc[d] = f16(fma(V_t[d], vs, acc[d]))}.
     */
    static void madF16(float[] acc, short[] v, int vOff, int vStride, int n, int[] kept, float[] rescale,
                       float[] weight, int count) {
        if (NativeKernels.flashMadF16(acc, v, vOff, vStride, n, kept, rescale, weight, count)) {
            return; // the same steps with F16C's conversions (lz_flash_avx512.c)
        }
        madF16Java(acc, v, vOff, vStride, n, kept, rescale, weight, count);
    }

    /** {@link #madF16(float[], short[], int, int, int, int[], float[], float[], int)} in the Vector API. */
    static void madF16Java(float[] acc, short[] v, int vOff, int vStride, int n, int[] kept, float[] rescale,
                           float[] weight, int count) {
        int d = 0;
        for (; d + LANES <= n; d += LANES) {
            FloatVector a = FloatVector.fromArray(S16, acc, d);
            for (int k = 0; k < count; k++) {
                if (rescale[k] != 1f) {
                    a = roundToF16(a.mul(rescale[k]));
                }
                a = roundToF16(F16Lanes.load(v, kept[k] * vStride + vOff + d).fma(FloatVector.broadcast(S16, weight[k]), a));
            }
            a.intoArray(acc, d);
        }
        for (; d < n; d++) {
            float a = acc[d];
            for (int k = 0; k < count; k++) {
                if (rescale[k] != 1f) {
                    a = Numerics.roundToF16(a * rescale[k]);
                }
                a = Numerics.roundToF16(Math.fma(F16Lanes.get(v, kept[k] * vStride + vOff + d), weight[k], a));
            }
            acc[d] = a;
        }
    }

    /** ggml_vec_mad_f32 (and simd_gemm's column update): {@code acc[d] = fma(v[d], w, acc[d])}. */
    static void madF32(float[] acc, float[] v, int vOff, int n, float w) {
        int d = 0;
        for (; d + LANES <= n; d += LANES) {
            FloatVector.fromArray(S16, v, vOff + d).fma(FloatVector.broadcast(S16, w), FloatVector.fromArray(S16, acc, d))
                    .intoArray(acc, d);
        }
        for (; d < n; d++) {
            acc[d] = Math.fma(v[vOff + d], w, acc[d]);
        }
    }
}
