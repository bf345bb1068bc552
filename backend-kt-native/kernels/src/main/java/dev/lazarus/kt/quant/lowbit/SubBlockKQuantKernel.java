package dev.lazarus.kt.quant.lowbit;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GridQuants;
import dev.lazarus.kt.gguf.SubBlockQuants;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.GgmlSums;
import dev.lazarus.kt.tensor.RowKernel;
import java.lang.foreign.MemorySegment;

/**
 * Q2_K, Q3_K, IQ4_XS and the grid I-quants (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S) against a Q8_K
 * activation (256-value super-blocks with an integer scale per 16 or 32 values, {@link SubBlockQuants},
 * {@link GridQuants}), in each of the orders llama-server's CPU backend rounds them in. One driver: every order starts from the same exact
 * integers of a super-block (the sub-block dots {@code Σ q·y}, the scaled sums {@code Σ sc·(q·y)}, the mins' sums
 * {@code Σ m·bsum}; all far below 2^24, so exact in any order) and differs only in where the f32 folds happen:
 * <ul>
 * <li>{@link Order#VEC_DOT}: {@code ggml_vec_dot_q2_K_q8_K} / {@code _q3_K_q8_K} / {@code _iq4_xs_q8_K} (AVX2 form,
 * which the AVX-512 variants run): eight f32 lanes, lane k holding per super-block {@code Σ sc·q·y} over values 4k..4k+3 of each
 * 32-value group (Q2_K first folds {@code m_2k·bsum_2k + m_2k+1·bsum_2k+1} into lane k by
 * {@code fma(-d_y·dmin, ·, acc)}), folded by {@code fma(d_y·d, lane, acc)}, summed by {@link GgmlSums#hsum8}. The
 * I-quants' {@code ggml_vec_dot_iq*_q8_K} have the same lanes (grid value times sign times the odd scale
 * {@code 2·ls + 1}) and multiply the sum by {@link GridQuants#post}; IQ1_S sums its ±⅛ shifts
 * ({@code Σ (2·ls + 1)·sign·bsum}) into one more f32 by {@code fma(d_y·d, ·, acc)}, IQ1_M into eight more lanes like
 * the others, and both add that sum times ⅛ at the end.</li>
 * <li>{@link Order#REPACKED_GEMV} / {@link Order#REPACKED_GEMM}: Q2_K that llama-server repacks on AVX-512 hosts
 * ({@code q2_K_8x8_q8_K}, rows a multiple of 8): one accumulator for {@code Σ sc·(q·y)} and one for
 * {@code Σ m·bsum}, each folded by {@code fma(sum, d·d_y, acc)} (resp. {@code dmin·d_y}) once per super-block (GEMV)
 * or once per 128 values (the GEMM of four activation rows), then subtracted.</li>
 * <li>{@link Order#TILED}: ggml's tiled matmul for batches of {@code KernelTable#TILED_MIN_BATCH} on a matrix it did
 * not repack: per super-block {@code v = d·s1} (Q2_K {@code fma(-dmin, s2, d·s1)}), {@code acc = fma(v, d_y, acc)};
 * the I-quants' sum times {@link GridQuants#post} at the end, IQ1's {@code s1} over the integers {@code 8·grid ± 1}
 * (its values times 8: found by measurement against llama-server, the tiled code being Debian's) and times ⅛.</li>
 * </ul>
 * Each super-block is decoded once per call for all the activations of a batch ({@link #dotBatch}).
 */
public final class SubBlockKQuantKernel implements RowKernel {

    /** Where the f32 folds happen; see the class comment. */
    public enum Order { VEC_DOT, REPACKED_GEMV, REPACKED_GEMM, TILED }

    /**
     * Floats of per-activation state: eight lanes (VEC_DOT; IQ1_M's shifts in eight more, IQ1_S's in one), two
     * accumulators (repacked) or one (tiled).
     */
    private static final int STATE = 16;

    private static final ThreadLocal<Decoded> DECODED = ThreadLocal.withInitial(Decoded::new);

    private final GgmlType type;
    private final Order order;
    /** An I-quant ({@link GridQuants}); IQ1_S / IQ1_M: with shifts. */
    private final boolean grid, iq1s, iq1m;

    public SubBlockKQuantKernel(GgmlType type, Order order) {
        if (!SubBlockQuants.covers(type) && !GridQuants.covers(type)) {
            throw new IllegalArgumentException("not a sub-block layout: " + type);
        }
        if (type != GgmlType.Q2_K && (order == Order.REPACKED_GEMV || order == Order.REPACKED_GEMM)) {
            throw new IllegalArgumentException(type + " is never repacked");
        }
        this.type = type;
        this.order = order;
        this.grid = GridQuants.covers(type);
        this.iq1s = type == GgmlType.IQ1_S;
        this.iq1m = type == GgmlType.IQ1_M;
    }

    /** One super-block's integers, decoded once for every activation it meets. */
    private static final class Decoded {
        final int[] q = new int[256];
        final int[] sc = new int[16];
        final int[] m = new int[16];
        final int[] quads = new int[64];
        /** IQ1's ±1 shift signs per value and their four-value dots with the activation. */
        final int[] delta = new int[256];
        final int[] deltaQuads = new int[64];
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
        if (grid) {
            GridQuants.codes(type, w, at, blk.q);
            GridQuants.scales(type, w, at, blk.sc);
            GridQuants.deltas(type, w, at, blk.delta);
            blk.d = GridQuants.d(type, w, at);
            blk.dmin = 0;
            return;
        }
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
        if (iq1s || iq1m) {
            int[] delta = blk.delta, dq = blk.deltaQuads;
            for (int i = 0; i < 64; i++) {
                int e = 4 * i;
                dq[i] = delta[e] * (int) y[yo + e] + delta[e + 1] * (int) y[yo + e + 1]
                        + delta[e + 2] * (int) y[yo + e + 2] + delta[e + 3] * (int) y[yo + e + 3];
            }
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
                if (iq1m) {
                    for (int k = 0; k < 8; k++) {
                        int lane = 0;
                        for (int g = 0; g < 8; g++) {
                            lane += sc[2 * g + k / 4] * blk.deltaQuads[8 * g + k];
                        }
                        state[at + 8 + k] = Math.fma(d, (float) lane, state[at + 8 + k]);
                    }
                } else if (iq1s) { // ggml's d_y·d rounds once, then one scalar fma per super-block
                    state[at + 8] = Math.fma(dy * blk.d, (float) shiftSum(blk), state[at + 8]);
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
                if (iq1s || iq1m) { // the tiled matmul's IQ1 values are the integers 8·grid ± 1 (measured)
                    v = blk.d * (float) (8 * s1 + shiftSum(blk));
                }
                state[at] = Math.fma(v, dy, state[at]);
            }
        }
    }

    /** IQ1's {@code Σ (2·ls + 1)·Σ sign·y} over the super-block: exact. */
    private static int shiftSum(Decoded blk) {
        int sum = 0;
        for (int s = 0; s < 16; s++) {
            sum += blk.sc[s] * subBlock(blk.deltaQuads, s);
        }
        return sum;
    }

    private static int subBlock(int[] quads, int s) {
        return quads[4 * s] + quads[4 * s + 1] + quads[4 * s + 2] + quads[4 * s + 3];
    }

    private float finish(float[] state, int at) {
        float post = grid ? GridQuants.post(type) : 1f; // a power of two: exact wherever it is applied
        return switch (order) {
            case VEC_DOT -> {
                float sum = post * GgmlSums.hsum8(state[at], state[at + 1], state[at + 2], state[at + 3],
                        state[at + 4], state[at + 5], state[at + 6], state[at + 7]);
                if (iq1m) {
                    sum += GridQuants.DELTA * GgmlSums.hsum8(state[at + 8], state[at + 9], state[at + 10],
                            state[at + 11], state[at + 12], state[at + 13], state[at + 14], state[at + 15]);
                } else if (iq1s) {
                    sum += GridQuants.DELTA * state[at + 8];
                }
                yield sum;
            }
            case REPACKED_GEMV, REPACKED_GEMM -> state[at] - state[at + 1];
            case TILED -> (iq1s || iq1m ? GridQuants.DELTA : post) * state[at];
        };
    }
}
