package dev.lazarus.kt.tensor;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.SubBlockQuants;
import java.lang.foreign.MemorySegment;

/**
 * Q2_K, Q3_K and IQ4_XS rows against a Q8_K activation (256-value super-blocks with a scale per 16 or 32 values,
 * {@link SubBlockQuants}), in each of the orders llama-server's CPU backend rounds them in. One driver: every order starts from the same exact
 * integers of a super-block (the sub-block dots {@code Σ q·y}, the scaled sums {@code Σ sc·(q·y)}, the mins' sums
 * {@code Σ m·bsum}; all far below 2^24, so exact in any order) and differs only in where the f32 folds happen:
 * <ul>
 * <li>{@link Order#VEC_DOT}: {@code ggml_vec_dot_q2_K_q8_K} / {@code _q3_K_q8_K} / {@code _iq4_xs_q8_K} (AVX2 form,
 * which the AVX-512 variants run): eight f32 lanes, lane k holding per super-block {@code Σ sc·q·y} over values 4k..4k+3 of each
 * 32-value group (Q2_K first folds {@code m_2k·bsum_2k + m_2k+1·bsum_2k+1} into lane k by
 * {@code fma(-d_y·dmin, ·, acc)}), folded by {@code fma(d_y·d, lane, acc)}, summed by {@link GgmlSums#hsum8}.</li>
 * <li>{@link Order#REPACKED_GEMV} / {@link Order#REPACKED_GEMM}: Q2_K that llama-server repacks on AVX-512 hosts
 * ({@code q2_K_8x8_q8_K}, rows a multiple of 8): one accumulator for {@code Σ sc·(q·y)} and one for
 * {@code Σ m·bsum}, each folded by {@code fma(sum, d·d_y, acc)} (resp. {@code dmin·d_y}) once per super-block (GEMV)
 * or once per 128 values (the GEMM of four activation rows), then subtracted.</li>
 * <li>{@link Order#TILED}: ggml's tiled matmul for batches of {@link TiledKQuantKernel#MIN_BATCH} on a matrix it did
 * not repack: per super-block {@code v = d·s1} (Q2_K {@code fma(-dmin, s2, d·s1)}), {@code acc = fma(v, d_y, acc)}.</li>
 * </ul>
 * Each super-block is decoded once per call for all the activations of a batch ({@link #dotBatch}).
 */
final class SubBlockKQuantKernel implements RowKernel {

    /** Where the f32 folds happen; see the class comment. */
    enum Order { VEC_DOT, REPACKED_GEMV, REPACKED_GEMM, TILED }

    /** Floats of per-activation state: eight lanes (VEC_DOT), two accumulators (repacked) or one (tiled). */
    private static final int STATE = 8;

    private static final ThreadLocal<Decoded> DECODED = ThreadLocal.withInitial(Decoded::new);

    private final GgmlType type;
    private final Order order;

    SubBlockKQuantKernel(GgmlType type, Order order) {
        if (!SubBlockQuants.covers(type)) {
            throw new IllegalArgumentException("not a sub-block layout: " + type);
        }
        if (type != GgmlType.Q2_K && (order == Order.REPACKED_GEMV || order == Order.REPACKED_GEMM)) {
            throw new IllegalArgumentException(type + " is never repacked");
        }
        this.type = type;
        this.order = order;
    }

    /** One super-block's integers, decoded once for every activation it meets. */
    private static final class Decoded {
        final int[] q = new int[256];
        final int[] sc = new int[16];
        final int[] m = new int[16];
        final int[] quads = new int[64];
        float d;
        float dmin;
    }

    @Override
    public float dot(MemorySegment w, long o, Activation x, int n) {
        Decoded blk = DECODED.get();
        float[] state = new float[STATE];
        for (int b = 0; b < n / 256; b++) {
            decode(w, o + (long) type.typeSize() * b, blk);
            accumulate(blk, x, b, state, 0);
        }
        return finish(state, 0);
    }

    @Override
    public void dotVectors4(MemorySegment w, long o, Activation[] xs, int from, int n, float[][] outs, int row) {
        dotBatch(w, o, xs, from, from + GROUP, n, outs, row);
    }

    @Override
    public void dotBatch(MemorySegment w, long o, Activation[] xs, int from, int to, int n, float[][] outs, int row) {
        Decoded blk = DECODED.get();
        float[] state = new float[STATE * (to - from)];
        for (int b = 0; b < n / 256; b++) {
            decode(w, o + (long) type.typeSize() * b, blk);
            for (int i = from; i < to; i++) {
                accumulate(blk, xs[i], b, state, STATE * (i - from));
            }
        }
        for (int i = from; i < to; i++) {
            outs[i][row] = finish(state, STATE * (i - from));
        }
    }

    private void decode(MemorySegment w, long at, Decoded blk) {
        SubBlockQuants.codes(type, w, at, blk.q);
        SubBlockQuants.scales(type, w, at, blk.sc);
        SubBlockQuants.mins(type, w, at, blk.m);
        blk.d = SubBlockQuants.d(type, w, at);
        blk.dmin = SubBlockQuants.dmin(type, w, at);
    }

    /** Super-block b of activation x folded into {@code state[at..at + STATE)} in this kernel's order. */
    private void accumulate(Decoded blk, Activation x, int b, float[] state, int at) {
        int[] q = blk.q, quads = blk.quads, sc = blk.sc, m = blk.m;
        float[] y = x.values;
        int yo = 256 * b;
        for (int i = 0; i < 64; i++) {
            int e = 4 * i;
            quads[i] = q[e] * (int) y[yo + e] + q[e + 1] * (int) y[yo + e + 1]
                    + q[e + 2] * (int) y[yo + e + 2] + q[e + 3] * (int) y[yo + e + 3];
        }
        float dy = x.scales[b];
        int[] bsums = x.bsums;
        int bo = 16 * b;
        boolean hasMin = type == GgmlType.Q2_K;
        switch (order) {
            case VEC_DOT -> {
                float d = dy * blk.d, dmin = -dy * blk.dmin;
                for (int k = 0; k < 8; k++) {
                    if (hasMin) {
                        int mins = m[2 * k] * bsums[bo + 2 * k] + m[2 * k + 1] * bsums[bo + 2 * k + 1];
                        state[at + k] = Math.fma(dmin, (float) mins, state[at + k]);
                    }
                    int lane = 0;
                    for (int g = 0; g < 8; g++) { // lane k of group g: values 32g + 4k .. +3, sub-block 2g + k / 4
                        lane += sc[2 * g + k / 4] * quads[8 * g + k];
                    }
                    state[at + k] = Math.fma(d, (float) lane, state[at + k]);
                }
            }
            case REPACKED_GEMV, REPACKED_GEMM -> {
                int per = order == Order.REPACKED_GEMV ? 16 : 8; // sub-blocks per fold
                for (int s0 = 0; s0 < 16; s0 += per) {
                    int isum = 0, minSum = 0;
                    for (int s = s0; s < s0 + per; s++) {
                        isum += sc[s] * subBlock(quads, s);
                        minSum += m[s] * bsums[bo + s];
                    }
                    state[at] = Math.fma((float) isum, blk.d * dy, state[at]);
                    state[at + 1] = Math.fma((float) minSum, blk.dmin * dy, state[at + 1]);
                }
            }
            case TILED -> {
                int s1 = 0, s2 = 0;
                for (int s = 0; s < 16; s++) {
                    s1 += sc[s] * subBlock(quads, s);
                    s2 += m[s] * bsums[bo + s];
                }
                float v = blk.d * (float) s1;
                if (hasMin) {
                    v = Math.fma(-blk.dmin, (float) s2, v);
                }
                state[at] = Math.fma(v, dy, state[at]);
            }
        }
    }

    private static int subBlock(int[] quads, int s) {
        return quads[4 * s] + quads[4 * s + 1] + quads[4 * s + 2] + quads[4 * s + 3];
    }

    private float finish(float[] state, int at) {
        return switch (order) {
            case VEC_DOT -> GgmlSums.hsum8(state[at], state[at + 1], state[at + 2], state[at + 3],
                    state[at + 4], state[at + 5], state[at + 6], state[at + 7]);
            case REPACKED_GEMV, REPACKED_GEMM -> state[at] - state[at + 1];
            case TILED -> state[at];
        };
    }
}
