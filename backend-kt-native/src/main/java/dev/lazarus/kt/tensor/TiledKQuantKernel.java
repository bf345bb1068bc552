package dev.lazarus.kt.tensor;

import static dev.lazarus.kt.tensor.Layouts.f16;
import static dev.lazarus.kt.tensor.Layouts.u8;

import dev.lazarus.kt.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q4_K and Q5_K rows as llama-server's tiled matmul rounds them (ggml-cpu {@code tiled/}, Debian's build b11669):
 * llama.cpp takes that path instead of the row-by-row {@code vec_dot} for a K-quant weight it did not repack
 * (Q5_K and Q6_K always on x86, Q4_K whose row count is not a multiple of 8) once the product has at least
 * {@link #MIN_BATCH} activation rows, for {@code mul_mat} (rows of the batch) and per expert of
 * {@code mul_mat_id} (tokens routed to that expert). Its numerics are its own: per 256-value super-block the
 * exact integers {@code s1 = Σ scale_j·(q·y)_j} (Q6_K: {@code (q - 32)·y} per 16 values) and
 * {@code s2 = Σ min_j·bsum_j}, then {@code v = d_w·(float) s1}, {@code v = fma(-dmin_w, (float) s2, v)} and
 * {@code acc = fma(v, d_y, acc)} once per super-block; the vec_dot kernels fold eight lanes instead, which is
 * a different rounding that the next Q8_K quantization (its f32 scale follows the row maximum to the last bit)
 * carries into everything downstream.
 *
 * <p>The integer sub-block dots are formed in f32 vectors, exact (|Σ| &lt; 2^24), from a per-thread decode
 * of the super-block's quants. Q6_K's tiled order is {@link Q6KInt16Kernel#TILED} (ggml's blocks) and
 * {@link Q6KPackedKernel#tiled} (the RAM tier's), in int16 products; its f32 form is in the bench sources
 * ({@code JavaTwins}).
 */
final class TiledKQuantKernel implements RowKernel {

    /** The fewest activation rows (per matrix, or per expert) for which llama.cpp takes the tiled path. */
    static final int MIN_BATCH = 8;

    private static final VectorSpecies<Float> S16 = FloatVector.SPECIES_512;
    private static final ThreadLocal<float[]> QUANTS = ThreadLocal.withInitial(() -> new float[256]);

    private static final TiledKQuantKernel Q4_K = new TiledKQuantKernel(GgmlType.Q4_K);
    private static final TiledKQuantKernel Q5_K = new TiledKQuantKernel(GgmlType.Q5_K);

    private final GgmlType type;

    private TiledKQuantKernel(GgmlType type) {
        this.type = type;
    }

    /** The tiled kernel of {@code type} (Q4_K, Q5_K), or null where this class has none. */
    static TiledKQuantKernel of(GgmlType type) {
        return switch (type) {
            case Q4_K -> Q4_K;
            case Q5_K -> Q5_K;
            default -> null;
        };
    }

    @Override
    public float dot(MemorySegment w, long o, Activation x, int n) {
        float[] q = QUANTS.get();
        float acc = 0;
        for (int b = 0; b < n / 256; b++) {
            long blk = o + (long) type.typeSize() * b;
            decode(w, blk, q);
            acc = Math.fma(superBlock(w, blk, q, x, b), x.scales[b], acc);
        }
        return acc;
    }

    /** Each super-block's quants decoded once for all the vectors from {@code from} to {@code to}. */
    @Override
    public void dotBatch(MemorySegment w, long o, Activation[] xs, int from, int to, int n, float[][] outs, int row) {
        float[] q = QUANTS.get();
        float[] acc = new float[to - from];
        for (int b = 0; b < n / 256; b++) {
            long blk = o + (long) type.typeSize() * b;
            decode(w, blk, q);
            for (int i = from; i < to; i++) {
                acc[i - from] = Math.fma(superBlock(w, blk, q, xs[i], b), xs[i].scales[b], acc[i - from]);
            }
        }
        for (int i = from; i < to; i++) {
            outs[i][row] = acc[i - from];
        }
    }

    /** The super-block's 256 quants as floats. */
    private void decode(MemorySegment w, long blk, float[] q) {
        boolean five = type == GgmlType.Q5_K;
        long qs = five ? blk + 48 : blk + 16, qh = blk + 16;
        for (int e = 0; e < 256; e++) {
            int j = e >> 5, l = e & 31;
            int byteVal = u8(w, qs + 32L * (j >> 1) + l);
            int v = (j & 1) == 0 ? byteVal & 0xF : byteVal >> 4;
            if (five) {
                v |= ((u8(w, qh + l) >> j) & 1) << 4;
            }
            q[e] = v;
        }
    }

    /** Super-block {@code b} against its decoded quants: {@code fma(-dmin, s2, d·s1)}. */
    private float superBlock(MemorySegment w, long blk, float[] q, Activation x, int b) {
        long scales = blk + 4;
        int s1 = 0, s2 = 0;
        for (int j = 0; j < 8; j++) {
            s1 += Layouts.kScale(w, scales, j) * exactDot(q, 32 * j, x.values, 256 * b + 32 * j);
            s2 += Layouts.kMin(w, scales, j) * (x.bsums[16 * b + 2 * j] + x.bsums[16 * b + 2 * j + 1]);
        }
        return Math.fma(-f16(w, blk + 2), (float) s2, f16(w, blk) * (float) s1);
    }

    /** Σ q·y over 32 values: integers below 2^24, so the f32 lanes are exact in any order. */
    private static int exactDot(float[] q, int qAt, float[] y, int yAt) {
        FloatVector p = FloatVector.fromArray(S16, q, qAt).mul(FloatVector.fromArray(S16, y, yAt));
        p = FloatVector.fromArray(S16, q, qAt + 16).fma(FloatVector.fromArray(S16, y, yAt + 16), p);
        return (int) p.reduceLanes(VectorOperators.ADD);
    }
}
