package dev.lazarus.kt.quant.lowbit;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.TableQuants;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.GgmlSums;
import dev.lazarus.kt.tensor.RowKernel;
import java.lang.foreign.MemorySegment;

/**
 * IQ4_NL and MXFP4 rows against a Q8_0 activation (32-value blocks of table values with one scale each,
 * {@link TableQuants}), in llama-server's two orders. Both start from each block's exact integers (a lane's
 * {@code Σ q·y} over four values, the block's over 32: far below 2^24, exact in any order):
 * <ul>
 * <li>{@link Order#VEC_DOT}: {@code ggml_vec_dot_iq4_nl_q8_0} / {@code _mxfp4_q8_0} (AVX2 form, which the AVX-512
 * variants run): blocks in pairs, even blocks into one set of eight f32 lanes and odd ones into another, lane k
 * holding values 4k..4k+3, each folded by {@code fma(d_y·d_w, lane, acc)}; the two sets added lane by lane and
 * summed by {@link GgmlSums#hsum8}; an odd last block added as {@code fma(d_y·d_w, Σ, sum)}.</li>
 * <li>{@link Order#REPACKED}: the matrices llama-server repacks on x86 (rows a multiple of 8: {@code iq4_nl_8x8},
 * {@code mxfp4_8x8}, the same GEMV and GEMM as {@code q4_0_8x8}): one accumulator per row,
 * {@code fma((float) Σ q·y, d_w·d_y, acc)} per block.</li>
 * </ul>
 */
public final class TableBlockKernel implements RowKernel {

    /** Where the f32 folds happen; see the class comment. */
    public enum Order { VEC_DOT, REPACKED }

    private static final ThreadLocal<int[]> CODES = ThreadLocal.withInitial(() -> new int[32]);

    private final GgmlType type;
    private final Order order;

    public TableBlockKernel(GgmlType type, Order order) {
        if (!TableQuants.covers(type)) {
            throw new IllegalArgumentException("not a table block layout: " + type);
        }
        this.type = type;
        this.order = order;
    }

    @Override
    public float dot(MemorySegment w, long o, Activation x, int n) {
        int[] q = CODES.get();
        float[] y = x.values;
        int blocks = n / 32, size = type.typeSize();
        if (order == Order.REPACKED) {
            float acc = 0;
            for (int b = 0; b < blocks; b++) {
                long blk = o + (long) size * b;
                TableQuants.codes(type, w, blk, q);
                int sum = 0;
                for (int i = 0; i < 32; i++) {
                    sum += q[i] * (int) y[32 * b + i];
                }
                acc = Math.fma((float) sum, TableQuants.scale(type, w, blk) * x.scales[b], acc);
            }
            return acc;
        }
        float[] acc = new float[16]; // lanes of the even blocks at 0..7, of the odd ones at 8..15
        int pairs = blocks - blocks % 2; // ggml takes blocks in pairs; an odd last one goes to the scalar tail
        for (int b = 0; b < pairs; b++) {
            long blk = o + (long) size * b;
            TableQuants.codes(type, w, blk, q);
            float d = x.scales[b] * TableQuants.scale(type, w, blk);
            int set = 8 * (b & 1);
            for (int k = 0; k < 8; k++) {
                int e = 32 * b + 4 * k;
                int lane = q[4 * k] * (int) y[e] + q[4 * k + 1] * (int) y[e + 1]
                        + q[4 * k + 2] * (int) y[e + 2] + q[4 * k + 3] * (int) y[e + 3];
                acc[set + k] = Math.fma(d, (float) lane, acc[set + k]);
            }
        }
        float sum = GgmlSums.hsum8(acc[0] + acc[8], acc[1] + acc[9], acc[2] + acc[10], acc[3] + acc[11],
                acc[4] + acc[12], acc[5] + acc[13], acc[6] + acc[14], acc[7] + acc[15]);
        if (blocks % 2 == 1) {
            long blk = o + (long) size * (blocks - 1);
            TableQuants.codes(type, w, blk, q);
            int s = 0;
            for (int i = 0; i < 32; i++) {
                s += q[i] * (int) y[32 * (blocks - 1) + i];
            }
            sum = Math.fma(x.scales[blocks - 1] * TableQuants.scale(type, w, blk), (float) s, sum);
        }
        return sum;
    }
}
