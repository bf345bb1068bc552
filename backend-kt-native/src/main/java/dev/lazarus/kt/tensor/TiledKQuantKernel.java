package dev.lazarus.kt.tensor;

import static dev.lazarus.kt.tensor.Layouts.f16;
import static dev.lazarus.kt.tensor.Layouts.u8;

import dev.lazarus.kt.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * K-quant rows as llama-server's tiled matmul rounds them (ggml-cpu {@code tiled/}, Debian's build b11669):
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
 * of the super-block's quants.
 */
final class TiledKQuantKernel implements RowKernel {

    /** The fewest activation rows (per matrix, or per expert) for which llama.cpp takes the tiled path. */
    static final int MIN_BATCH = 8;

    private static final VectorSpecies<Float> S16 = FloatVector.SPECIES_512;
    private static final ThreadLocal<float[]> QUANTS = ThreadLocal.withInitial(() -> new float[256]);

    private static final TiledKQuantKernel Q4_K = new TiledKQuantKernel(GgmlType.Q4_K);
    private static final TiledKQuantKernel Q5_K = new TiledKQuantKernel(GgmlType.Q5_K);
    private static final TiledKQuantKernel Q6_K = new TiledKQuantKernel(GgmlType.Q6_K);

    private final GgmlType type;
    /** Q6_K in {@link Q6KPacked}'s layout: the order of its super-blocks; null for ggml's blocks. */
    private final RowGroups packed;
    /** Q6_K in {@link Q6KPacked}'s layout: the byte offset of its headers; -1 for ggml's blocks. */
    private final long packedHeaders;

    private TiledKQuantKernel(GgmlType type) {
        this(type, null);
    }

    private TiledKQuantKernel(GgmlType type, RowGroups packed) {
        this.type = type;
        this.packed = packed;
        this.packedHeaders = packed == null ? -1 : packed.blocks() * Q6KPacked.CODE_BYTES;
    }

    /** The Q6_K tiled kernel on a {@link Q6KPacked} matrix (RAM-tier experts) whose super-blocks lie in {@code groups}. */
    static TiledKQuantKernel q6kPacked(RowGroups groups) {
        return new TiledKQuantKernel(GgmlType.Q6_K, groups);
    }

    /** The tiled kernel of {@code type}, or null where llama.cpp has none this engine runs. */
    static TiledKQuantKernel of(GgmlType type) {
        return switch (type) {
            case Q4_K -> Q4_K;
            case Q5_K -> Q5_K;
            case Q6_K -> Q6_K;
            default -> null;
        };
    }

    @Override
    public float dot(MemorySegment w, long o, Activation x, int n) {
        float[] q = QUANTS.get();
        float acc = 0;
        long first = block(o, 0), step = block(o, 1) - first;
        for (int b = 0; b < n / 256; b++) {
            long blk = first + step * b;
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
        long first = block(o, 0), step = block(o, 1) - first;
        for (int b = 0; b < n / 256; b++) {
            long blk = first + step * b;
            decode(w, blk, q);
            for (int i = from; i < to; i++) {
                acc[i - from] = Math.fma(superBlock(w, blk, q, xs[i], b), xs[i].scales[b], acc[i - from]);
            }
        }
        for (int i = from; i < to; i++) {
            outs[i][row] = acc[i - from];
        }
    }

    /**
     * Byte offset of super-block b of the row at kernel offset o: its block in ggml's layout, its codes in the packed
     * one (a row's super-blocks are evenly spaced in both; b may be one past the row's last).
     */
    private long block(long o, int b) {
        if (packed == null) {
            return o + (long) type.typeSize() * b;
        }
        return packed.block(packed.row(o, Q6KPacked.CODE_BYTES), b) * Q6KPacked.CODE_BYTES;
    }

    /** The super-block's 256 quants as floats: Q4_K/Q5_K codes, Q6_K codes less 32. */
    private void decode(MemorySegment w, long blk, float[] q) {
        if (packedHeaders >= 0) {
            Q6KPacked.decodeCodes(w, blk, q);
            return;
        }
        if (type == GgmlType.Q6_K) {
            for (int h = 0; h < 2; h++) {
                for (int g = 0; g < 4; g++) {
                    for (int e = 0; e < 32; e++) {
                        int low = u8(w, blk + 64L * h + 32L * (g & 1) + e);
                        int high = (u8(w, blk + 128 + 32L * h + e) >> (2 * g)) & 3;
                        q[128 * h + 32 * g + e] = ((g < 2 ? low & 0xF : low >> 4) | high << 4) - 32;
                    }
                }
            }
            return;
        }
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

    /**
     * Super-block {@code b} against its decoded quants: Q4_K/Q5_K {@code fma(-dmin, s2, d·s1)}; Q6_K
     * {@code d·Σ scale_s·(q - 32)·y} over its sixteen 16-value sub-blocks.
     */
    private float superBlock(MemorySegment w, long blk, float[] q, Activation x, int b) {
        if (type == GgmlType.Q6_K) {
            // the scales and d of ggml's block, or of the packed header (d stored as the f32 of ggml's f16)
            long scales = packedHeaders < 0 ? blk + 192 : packedHeaders + blk / Q6KPacked.CODE_BYTES * Q6KPacked.HEADER_BYTES;
            int s1 = 0;
            for (int s = 0; s < 16; s++) {
                s1 += Layouts.i8(w, scales + s) * exactDot(q, 16 * s, x.values, 256 * b + 16 * s, 16);
            }
            return (packedHeaders < 0 ? f16(w, blk + 208) : w.get(Layouts.F32, scales + 16)) * (float) s1;
        }
        long scales = blk + 4;
        int s1 = 0, s2 = 0;
        for (int j = 0; j < 8; j++) {
            s1 += Layouts.kScale(w, scales, j) * exactDot(q, 32 * j, x.values, 256 * b + 32 * j, 32);
            s2 += Layouts.kMin(w, scales, j) * (x.bsums[16 * b + 2 * j] + x.bsums[16 * b + 2 * j + 1]);
        }
        return Math.fma(-f16(w, blk + 2), (float) s2, f16(w, blk) * (float) s1);
    }

    /** Σ q·y over {@code len} (16 or 32) values: integers below 2^24, so the f32 lanes are exact in any order. */
    private static int exactDot(float[] q, int qAt, float[] y, int yAt, int len) {
        FloatVector p = FloatVector.fromArray(S16, q, qAt).mul(FloatVector.fromArray(S16, y, yAt));
        if (len == 32) {
            p = FloatVector.fromArray(S16, q, qAt + 16).fma(FloatVector.fromArray(S16, y, yAt + 16), p);
        }
        return (int) p.reduceLanes(VectorOperators.ADD);
    }
}
