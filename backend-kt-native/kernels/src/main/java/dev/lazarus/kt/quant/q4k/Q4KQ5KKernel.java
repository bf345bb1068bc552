package dev.lazarus.kt.quant.q4k;

import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.GgmlSums;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.RowKernel;
import dev.lazarus.kt.tensor.Simd;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q5_K rows and Q4_K rows in place (matrices llama-server does not repack), one exact-integer stage in f32 lanes and
 * two float folds ({@link Order}): {@link Order#VEC_DOT}, the orders of {@code ggml_vec_dot_q5_K_q8_K} /
 * {@code ggml_vec_dot_q4_K_q8_K} of Debian's build, which {@code GgmlKQuantKernels.q5kInPlace} and
 * {@code GgmlKQuantKernels.q4kInPlace} state one value at a time; {@link Order#TILED}, llama-server's tiled matmul
 * (ggml-cpu {@code tiled/}), which it takes instead for a batch of {@code KernelTable#TILED_MIN_BATCH} or more
 * activation rows (per matrix, or per expert), stated by the tests' {@code tiledOrder}. The two
 * types share the block (f16 {@code d} and {@code dmin}, twelve bytes of 6-bit scales and mins, 4-bit codes two to a
 * byte; Q5_K adds a 32-byte plane of fifth bits) and ggml's eight integer lanes per super-block; they differ only in
 * the fifth bit and in how the mins are folded.
 *
 * <p>Everything inside a super-block is exact in f32, so it is formed in any order: a product
 * {@code scale·q·y} is below 63·31·127 &lt; 2^18, ggml's lane k (positions 4k..4k+3 of the eight 32-value groups)
 * below 32·2^18 = 2^23. The codes of a 16-value slice are widened to int lanes once per pair of groups (low and high
 * nibble of one {@code qs} run), the products summed per value position over the eight groups in f32 vectors, then
 * neighbouring positions added twice (lane 4k of each half then holds ggml's lane k or 4 + k). Only the float folds
 * keep ggml's order: {@code fma(d_y·d_w, lane, acc)} per super-block and lane, {@link GgmlSums#hsum8} at the end,
 * plus the mins (Q5_K: one scalar {@code fma(-d_y·dmin_w, Σ min·bsum, summs)}; Q4_K: four lanes, lane i taking
 * groups 2i and 2i+1, summed {@code (m0 + m2) + (m1 + m3)}). The tiled order folds each super-block once: the 32
 * position sums (each below 8·2^18) added to one exact {@code s1 = Σ scale_j·(q·y)_j} in int lanes, the mins'
 * {@code s2 = Σ min_j·bsum_j}, then {@code v = fma(-dmin_w, (float) s2, d_w·(float) s1)} and
 * {@code acc = fma(v, d_y, acc)}: a different rounding from vec_dot's lanes, which the next Q8_K quantization carries
 * into everything downstream.
 *
 * <p>Written for C2 as {@code Q6KKernel} (bench sources) is: one method per super-block, no vector crosses a call (the position
 * sums go through a small float array to {@link #fold}), scratch allocated once per row range.
 */
public final class Q4KQ5KKernel implements RowKernel {

    /** The float fold of the super-blocks' exact integers. */
    enum Order {
        /** vec_dot's eight lanes per super-block, {@link GgmlSums#hsum8} at the end (decode, batches below eight). */
        VEC_DOT,
        /** The tiled matmul's one {@code fma(v, d_y, acc)} per super-block (batches of eight or more). */
        TILED
    }

    /** Q4_K in place, vec_dot: 144-byte blocks, codes at 16. */
    public static final Q4KQ5KKernel Q4_K_IN_PLACE = new Q4KQ5KKernel(144, 16, false, Order.VEC_DOT);
    /** Q5_K, vec_dot: 176-byte blocks, fifth bits at 16, codes at 48. */
    public static final Q4KQ5KKernel Q5_K = new Q4KQ5KKernel(176, 48, true, Order.VEC_DOT);
    /** Q4_K in place, the tiled matmul. */
    public static final Q4KQ5KKernel Q4_K_TILED = new Q4KQ5KKernel(144, 16, false, Order.TILED);
    /** Q5_K, the tiled matmul. */
    public static final Q4KQ5KKernel Q5_K_TILED = new Q4KQ5KKernel(176, 48, true, Order.TILED);

    private static final VectorSpecies<Float> S16 = FloatVector.SPECIES_512;
    private static final VectorSpecies<Integer> I16 = IntVector.SPECIES_512;
    private static final VectorSpecies<Byte> B16 = ByteVector.SPECIES_128;
    private static final VectorShuffle<Float> PAIRS = VectorShuffle.fromOp(S16, i -> i ^ 1);
    private static final VectorShuffle<Float> QUADS = VectorShuffle.fromOp(S16, i -> i ^ 2);
    /** Lanes per activation: ggml's lanes 0-3 at 0, 4, 8, 12 and 4-7 at 16, 20, 24, 28, then the mins at 32..35. */
    private static final int ACC = 36;
    private static final int MINS = 32;
    /** Position sums per activation: positions 0-15, then 16-31, of a 32-value group. */
    private static final int SUMS = 32;

    private final int blockBytes;
    private final int qsAt;
    private final boolean fifthBit;
    private final boolean tiled;

    private Q4KQ5KKernel(int blockBytes, int qsAt, boolean fifthBit, Order order) {
        this.blockBytes = blockBytes;
        this.qsAt = qsAt;
        this.fifthBit = fifthBit;
        this.tiled = order == Order.TILED;
    }

    @Override
    public float dot(MemorySegment w, long o, Activation x, int n) {
        return dot(w, o, x, n, new float[ACC], new float[SUMS]);
    }

    /** The rows of a range with one scratch (the accumulators zeroed per row). */
    @Override
    public void dotRows(MemorySegment w, long rowBytes, Activation x, int n, float[] out, int rowStart, int rowEnd) {
        float[] acc = new float[ACC];
        float[] sums = new float[SUMS];
        for (int r = rowStart; r < rowEnd; r++) {
            java.util.Arrays.fill(acc, 0f);
            out[r] = dot(w, r * rowBytes, x, n, acc, sums);
        }
    }

    private float dot(MemorySegment w, long o, Activation x, int n, float[] acc, float[] sums) {
        if (tiled) {
            return dotTiled(w, o, x, n, sums);
        }
        for (int b = 0; b < n / 256; b++) {
            long blk = o + (long) blockBytes * b;
            long scales = w.get(Layouts.I64, blk + 4);
            int scalesHi = w.get(Layouts.I32, blk + 12);
            superBlock(w, blk + qsAt, fifthBit, scales, scalesHi, x.values, 256 * b, sums);
            fold(sums, 0, x.scales[b] * Layouts.f16(w, blk), acc, 0);
            foldMins(scales, scalesHi, x.bsums, 16 * b, -x.scales[b] * Layouts.f16(w, blk + 2), acc, 0);
        }
        return finish(acc, 0);
    }

    /** {@link #dot} in the tiled order: the same stage, one fma per super-block (a loop of its own, as vec_dot's). */
    private float dotTiled(MemorySegment w, long o, Activation x, int n, float[] sums) {
        float acc = 0;
        for (int b = 0; b < n / 256; b++) {
            long blk = o + (long) blockBytes * b;
            long scales = w.get(Layouts.I64, blk + 4);
            int scalesHi = w.get(Layouts.I32, blk + 12);
            superBlock(w, blk + qsAt, fifthBit, scales, scalesHi, x.values, 256 * b, sums);
            acc = Math.fma(tiledBlock(w, blk, scales, scalesHi, sums, 0, x.bsums, 16 * b), x.scales[b], acc);
        }
        return acc;
    }

    /** Four activations against one row: each slice's codes assembled once, every product exactly {@link #dot}. */
    @Override
    public void dotVectors4(MemorySegment w, long o, Activation[] xs, int from, int n, float[][] outs, int row) {
        Activation x0 = xs[from], x1 = xs[from + 1], x2 = xs[from + 2], x3 = xs[from + 3];
        float[] acc = new float[GROUP * ACC];
        float[] sums = new float[GROUP * SUMS];
        for (int b = 0; b < n / 256; b++) {
            long blk = o + (long) blockBytes * b;
            long scales = w.get(Layouts.I64, blk + 4);
            int scalesHi = w.get(Layouts.I32, blk + 12);
            superBlock4(w, blk + qsAt, fifthBit, scales, scalesHi, x0.values, x1.values, x2.values, x3.values, 256 * b,
                    sums);
            float dw = Layouts.f16(w, blk), dminW = Layouts.f16(w, blk + 2);
            for (int i = 0; i < GROUP; i++) {
                Activation x = xs[from + i];
                if (tiled) {
                    acc[ACC * i] = Math.fma(tiledBlock(w, blk, scales, scalesHi, sums, SUMS * i, x.bsums, 16 * b),
                            x.scales[b], acc[ACC * i]);
                    continue;
                }
                fold(sums, SUMS * i, x.scales[b] * dw, acc, ACC * i);
                foldMins(scales, scalesHi, x.bsums, 16 * b, -x.scales[b] * dminW, acc, ACC * i);
            }
        }
        for (int i = 0; i < GROUP; i++) {
            outs[from + i][row] = tiled ? acc[ACC * i] : finish(acc, ACC * i);
        }
    }

    /**
     * The tiled order's value of one super-block: {@code fma(-dmin_w, (float) s2, d_w·(float) s1)}, {@code s1} the
     * position sums at {@code sumsAt} added in int lanes (two of them, below 2^22, in f32 first: exact).
     */
    private static float tiledBlock(MemorySegment w, long blk, long scales, int scalesHi, float[] sums, int sumsAt,
                                    int[] bsums, int bo) {
        FloatVector pairs = FloatVector.fromArray(S16, sums, sumsAt).add(FloatVector.fromArray(S16, sums, sumsAt + 16));
        int s1 = ((IntVector) pairs.convert(VectorOperators.F2I, 0)).reduceLanes(VectorOperators.ADD);
        int s2 = 0;
        for (int j = 0; j < 8; j++) {
            s2 += min(scales, scalesHi, j) * (bsums[bo + 2 * j] + bsums[bo + 2 * j + 1]);
        }
        return Math.fma(-Layouts.f16(w, blk + 2), (float) s2, Layouts.f16(w, blk) * (float) s1);
    }

    private float finish(float[] acc, int at) {
        float lanes = GgmlSums.hsum8(acc[at], acc[at + 4], acc[at + 8], acc[at + 12],
                acc[at + 16], acc[at + 20], acc[at + 24], acc[at + 28]);
        int m = at + MINS;
        return fifthBit ? lanes + acc[m] : lanes + ((acc[m] + acc[m + 2]) + (acc[m + 1] + acc[m + 3]));
    }

    /** The mins' term: Q5_K one integer per super-block into a scalar, Q4_K four (groups 2i, 2i+1) into four lanes. */
    private void foldMins(long scales, int scalesHi, int[] bsums, int bo, float dmin, float[] acc, int at) {
        if (fifthBit) {
            int mins = 0;
            for (int j = 0; j < 8; j++) {
                mins += min(scales, scalesHi, j) * (bsums[bo + 2 * j] + bsums[bo + 2 * j + 1]);
            }
            acc[at + MINS] = Math.fma(dmin, (float) mins, acc[at + MINS]);
        } else {
            for (int i = 0; i < 4; i++) {
                int g0 = bsums[bo + 4 * i] + bsums[bo + 4 * i + 1];
                int g1 = bsums[bo + 4 * i + 2] + bsums[bo + 4 * i + 3];
                int prod = min(scales, scalesHi, 2 * i) * g0 + min(scales, scalesHi, 2 * i + 1) * g1;
                acc[at + MINS + i] = Math.fma(dmin, (float) prod, acc[at + MINS + i]);
            }
        }
    }

    /**
     * acc += d · ggml's eight lanes: neighbouring position sums added twice (exact, see the class comment), so
     * that lane 4k of each half holds a lane; the other lanes carry partial sums nobody reads.
     */
    private static void fold(float[] sums, int sumsAt, float d, float[] acc, int accAt) {
        FloatVector dv = FloatVector.broadcast(S16, d);
        FloatVector lo = FloatVector.fromArray(S16, sums, sumsAt);
        lo = lo.add(lo.rearrange(PAIRS));
        lo = lo.add(lo.rearrange(QUADS));
        dv.fma(lo, FloatVector.fromArray(S16, acc, accAt)).intoArray(acc, accAt);
        FloatVector hi = FloatVector.fromArray(S16, sums, sumsAt + 16);
        hi = hi.add(hi.rearrange(PAIRS));
        hi = hi.add(hi.rearrange(QUADS));
        dv.fma(hi, FloatVector.fromArray(S16, acc, accAt + 16)).intoArray(acc, accAt + 16);
    }

    /** 16 bytes at {@code at}, zero-extended to int lanes. */
    private static IntVector widen(MemorySegment w, long at) {
        return ((IntVector) ByteVector.fromMemorySegment(B16, w, at, Simd.LE)
                .convertShape(VectorOperators.ZERO_EXTEND_B2I, I16, 0));
    }

    /**
     * sums[0..32) = Σ over the eight groups of scale·q·y per value position (exact integers in f32). {@code qs}: the
     * block's codes; Q5_K's fifth bits sit 32 bytes before them.
     */
    private static void superBlock(MemorySegment w, long qs, boolean fifthBit, long scales, int scalesHi, float[] xs,
                                   int at, float[] sums) {
        for (int e0 = 0; e0 < 32; e0 += 16) {
            // the fifth bits moved up to bit 4 + j, so that bit j of the plane lands on 16 after a shift by j
            IntVector qh = fifthBit ? widen(w, qs - 32 + e0).lanewise(VectorOperators.LSHL, 4) : IntVector.zero(I16);
            FloatVector s = FloatVector.zero(S16);
            for (int i = 0; i < 4; i++) {
                IntVector codes = widen(w, qs + 32L * i + e0);
                IntVector lo = codes.and(0xF), hi = codes.lanewise(VectorOperators.LSHR, 4);
                if (fifthBit) {
                    lo = lo.or(qh.lanewise(VectorOperators.LSHR, 2 * i).and(16));
                    hi = hi.or(qh.lanewise(VectorOperators.LSHR, 2 * i + 1).and(16));
                }
                int a = at + 64 * i + e0;
                s = ((FloatVector) lo.convert(VectorOperators.I2F, 0)).mul(FloatVector.fromArray(S16, xs, a))
                        .fma(FloatVector.broadcast(S16, scale(scales, scalesHi, 2 * i)), s);
                s = ((FloatVector) hi.convert(VectorOperators.I2F, 0)).mul(FloatVector.fromArray(S16, xs, a + 32))
                        .fma(FloatVector.broadcast(S16, scale(scales, scalesHi, 2 * i + 1)), s);
            }
            s.intoArray(sums, e0);
        }
    }

    /** {@link #superBlock} for four activations, the codes assembled once; sums holds four {@link #SUMS} runs. */
    private static void superBlock4(MemorySegment w, long qs, boolean fifthBit, long scales, int scalesHi,
                                    float[] x0, float[] x1, float[] x2, float[] x3, int at, float[] sums) {
        for (int e0 = 0; e0 < 32; e0 += 16) {
            IntVector qh = fifthBit ? widen(w, qs - 32 + e0).lanewise(VectorOperators.LSHL, 4) : IntVector.zero(I16);
            FloatVector s0 = FloatVector.zero(S16), s1 = s0, s2 = s0, s3 = s0;
            for (int i = 0; i < 4; i++) {
                IntVector codes = widen(w, qs + 32L * i + e0);
                IntVector lo = codes.and(0xF), hi = codes.lanewise(VectorOperators.LSHR, 4);
                if (fifthBit) {
                    lo = lo.or(qh.lanewise(VectorOperators.LSHR, 2 * i).and(16));
                    hi = hi.or(qh.lanewise(VectorOperators.LSHR, 2 * i + 1).and(16));
                }
                FloatVector qLo = (FloatVector) lo.convert(VectorOperators.I2F, 0);
                FloatVector qHi = (FloatVector) hi.convert(VectorOperators.I2F, 0);
                FloatVector scLo = FloatVector.broadcast(S16, scale(scales, scalesHi, 2 * i));
                FloatVector scHi = FloatVector.broadcast(S16, scale(scales, scalesHi, 2 * i + 1));
                int a = at + 64 * i + e0;
                s0 = qLo.mul(FloatVector.fromArray(S16, x0, a)).fma(scLo, s0);
                s0 = qHi.mul(FloatVector.fromArray(S16, x0, a + 32)).fma(scHi, s0);
                s1 = qLo.mul(FloatVector.fromArray(S16, x1, a)).fma(scLo, s1);
                s1 = qHi.mul(FloatVector.fromArray(S16, x1, a + 32)).fma(scHi, s1);
                s2 = qLo.mul(FloatVector.fromArray(S16, x2, a)).fma(scLo, s2);
                s2 = qHi.mul(FloatVector.fromArray(S16, x2, a + 32)).fma(scHi, s2);
                s3 = qLo.mul(FloatVector.fromArray(S16, x3, a)).fma(scLo, s3);
                s3 = qHi.mul(FloatVector.fromArray(S16, x3, a + 32)).fma(scHi, s3);
            }
            s0.intoArray(sums, e0);
            s1.intoArray(sums, SUMS + e0);
            s2.intoArray(sums, 2 * SUMS + e0);
            s3.intoArray(sums, 3 * SUMS + e0);
        }
    }

    /** Byte {@code k} (0..11) of the twelve scale bytes, held as a long (0-7) and an int (8-11). */
    private static int scaleByte(long scales, int scalesHi, int k) {
        return (k < 8 ? (int) (scales >>> 8 * k) : scalesHi >>> 8 * (k - 8)) & 0xFF;
    }

    /** Scale {@code j} of the block, as {@link Layouts#kScale}. */
    private static int scale(long scales, int scalesHi, int j) {
        return j < 4 ? scaleByte(scales, scalesHi, j) & 63
                : (scaleByte(scales, scalesHi, j + 4) & 0xF) | (scaleByte(scales, scalesHi, j - 4) >> 6) << 4;
    }

    /** Min {@code j} of the block, as {@link Layouts#kMin}. */
    private static int min(long scales, int scalesHi, int j) {
        return j < 4 ? scaleByte(scales, scalesHi, j + 4) & 63
                : scaleByte(scales, scalesHi, j + 4) >> 4 | (scaleByte(scales, scalesHi, j) >> 6) << 4;
    }
}
