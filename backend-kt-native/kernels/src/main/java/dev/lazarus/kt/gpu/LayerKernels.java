package dev.lazarus.kt.gpu;

import dev.lazarus.kt.gguf.GgmlType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Typed launches of the kernels in {@code src/main/cuda/layers.cu} and {@code experts.cu} on one stream,
 * for the GPU layer path. Launch shapes follow the kernels' comments: one warp per matrix row in blocks
 * of {@link #WARPS} warps, one block for a norm, one block per head for rope and attention.
 */
final class LayerKernels {

    static final int WARPS = 4;
    private static final int ROW_THREADS = 32 * WARPS;
    private static final int NORM_THREADS = 256;
    private static final int MAX_NORM_THREADS = 1024;
    /**
     * Must match ATT_THREADS in layers.cu (its shared partial sums are sized by it) and the batched prompt's
     * (PrefillKernels: the same body, so the same sums). 1024: a head's positions and value sums spread over 32
     * warps; 256 left the decode attention of the skewed bench model at ~15 µs a layer on an H100.
     */
    static final int ATT_THREADS = 1024;
    /** Warps of a moe_gate_up_q block (MOE_GU_WARPS in moe.cu): 32 rows a block, 32 / this many a warp. */
    private static final int MOE_GU_WARPS = 16;
    private static final int QK = 32;
    /** Longest attention row (a head, or MLA's latent + rope row) the kernels' shared buffers hold. */
    static final int MAX_ROW = 1024;

    /** What the attention kernels need to know about a block's heads. */
    record Heads(int heads, int kvHeads, int headDim, int valueDim, int ropeDims, boolean neox, float eps) {
        Heads {
            if (headDim > MAX_ROW || headDim % 2 != 0 || ropeDims > headDim) {
                throw new IllegalArgumentException("head size %d (rope %d) beyond the GPU kernels' limit (%d)"
                        .formatted(headDim, ropeDims, MAX_ROW));
            }
        }

        int qkvWidth() {
            return heads * headDim + kvHeads * (headDim + valueDim);
        }

        int kvWidth() {
            return kvHeads * (headDim + valueDim);
        }
    }

    private final CudaDriver cu;
    private final MemorySegment stream;
    private final LaunchArgs args;
    private final MemorySegment rmsNorm;
    private final MemorySegment gemvQ;
    private final MemorySegment gemv3Q;
    private final MemorySegment gemvF32;
    private final MemorySegment gemvF16;
    private final MemorySegment qkNormRope;
    private final MemorySegment attention;
    private final MemorySegment add;
    private final MemorySegment quantize;
    private final MemorySegment gateUp;
    private final MemorySegment mlaRopeStore;
    private final MemorySegment gemvHeads;
    private final MemorySegment gateUpF32;
    private final MemorySegment mlaKvExpand;
    private final MemorySegment gateUpF16;
    private final MemorySegment moeRoute;
    private final MemorySegment moeGateUp;
    private final MemorySegment moeDown;

    LayerKernels(CudaDriver cu, MemorySegment module, MemorySegment stream, Arena arena) {
        this.cu = cu;
        this.stream = stream;
        this.args = new LaunchArgs(arena);
        this.rmsNorm = cu.function(module, "rmsnorm_q8");
        this.gemvQ = cu.function(module, "gemv_q_acc");
        this.gemv3Q = cu.function(module, "gemv3_q");
        this.gemvF32 = cu.function(module, "gemv_f32");
        this.gemvF16 = cu.function(module, "gemv_f16");
        this.qkNormRope = cu.function(module, "qk_norm_rope_store");
        this.attention = cu.function(module, "attention");
        this.add = cu.function(module, "add_f32");
        this.quantize = cu.function(module, "quantize_q8_0");
        this.gateUp = cu.function(module, "gate_up_silu_q");
        this.mlaRopeStore = cu.function(module, "mla_rope_store");
        this.gemvHeads = cu.function(module, "gemv_q8_0_heads");
        this.gateUpF32 = cu.function(module, "gate_up_silu_f32");
        this.mlaKvExpand = cu.function(module, "mla_kv_expand_store");
        this.gateUpF16 = cu.function(module, "gate_up_silu_f16");
        this.moeRoute = cu.function(module, "moe_route");
        this.moeGateUp = cu.function(module, "moe_gate_up_q");
        this.moeDown = cu.function(module, "moe_down_q");
    }

    /** Whether {@link #matvec} takes matrices of {@code type}. */
    static boolean supports(GgmlType type) {
        return quantized(type) || type == GgmlType.F32 || type == GgmlType.F16;
    }

    /**
     * Whether the kernels take {@code type} in its GGUF blocks against a Q8_0 activation (quants.cuh): Q8_0, Q4_0
     * and the K-quants Q4_K, Q5_K, Q6_K.
     */
    static boolean quantized(GgmlType type) {
        return switch (type) {
            case Q8_0, Q4_0, Q4_K, Q5_K, Q6_K -> true;
            default -> false;
        };
    }

    /**
     * {@code y = (x / rms(x)) * w}; {@code yq} (0: none) gets y as Q8_0 too. One block of a thread per value up to
     * {@link #MAX_NORM_THREADS}: the norm is one block's latency on the token's critical path (17 per token on
     * the skewed benchmark model), and each pass of a narrower block adds a load and a warp reduction to it.
     */
    void rmsNorm(long x, long w, long y, long yq, int n, float eps) {
        launch(rmsNorm, 1, Math.min(MAX_NORM_THREADS, roundUp(n, 32)), args.begin().ptr(x).ptr(w).ptr(y).ptr(yq).i32(n)
                .f32(eps));
    }

    /**
     * {@code y = m · x}, or {@code y += alpha · m · x} with {@code accumulate} ({@code x}: f32 at {@code x}, its
     * Q8_0 form at {@code xq}, which only a {@link #quantized} matrix reads).
     */
    void matvec(DeviceMatrix m, long x, long xq, long y, float alpha, boolean accumulate) {
        if (!supports(m.type())) {
            throw new IllegalArgumentException("no GPU matvec for " + m.type());
        }
        if (quantized(m.type())) {
            launch(gemvQ, rowBlocks(m.rows()), ROW_THREADS, args.begin().ptr(m.data()).ptr(xq).ptr(y)
                    .i32(m.rows()).i32(m.cols()).f32(alpha).i32(accumulate ? 1 : 0).i32(m.type().id()));
            return;
        }
        launch(m.type() == GgmlType.F32 ? gemvF32 : gemvF16, rowBlocks(m.rows()), ROW_THREADS, args.begin()
                .ptr(m.data()).ptr(x).ptr(y).i32(m.rows()).i32(m.cols()).f32(alpha).i32(accumulate ? 1 : 0));
    }

    /**
     * {@code y = [q · x | k · x | v · x]}: one launch for {@link #quantized} projections of one type, three
     * otherwise (F32, F16; the three of one block share a type).
     */
    void qkv(DeviceMatrix q, DeviceMatrix k, DeviceMatrix v, long x, long xq, long y) {
        if (quantized(q.type()) && k.type() == q.type() && v.type() == q.type()) {
            int rows = q.rows() + k.rows() + v.rows();
            launch(gemv3Q, rowBlocks(rows), ROW_THREADS, args.begin().ptr(q.data()).ptr(k.data()).ptr(v.data())
                    .i32(q.rows()).i32(k.rows()).i32(v.rows()).ptr(xq).ptr(y).i32(q.cols()).i32(q.type().id()));
            return;
        }
        matvec(q, x, xq, y, 1f, false);
        matvec(k, x, xq, y + 4L * q.rows(), 1f, false);
        matvec(v, x, xq, y + 4L * (q.rows() + k.rows()), 1f, false);
    }

    /**
     * {@code h = silu(gate · x) * (up · x)} for one token: {@link #quantized} matrices read {@code xq}, F32 and
     * F16 ones the f32 {@code x}; {@code gate} and {@code up} share a type.
     */
    void gateUpSilu(DeviceMatrix gate, DeviceMatrix up, long x, long xq, long h) {
        if (quantized(gate.type())) {
            gateUpSilu(gate.data(), up.data(), xq, h, gate.rows(), gate.cols(), gate.type());
            return;
        }
        launch(gate.type() == GgmlType.F32 ? gateUpF32 : gateUpF16, rowBlocks(gate.rows()), ROW_THREADS,
                args.begin().ptr(gate.data()).ptr(up.data()).ptr(x).ptr(h).i32(gate.rows()).i32(gate.cols()));
    }

    /**
     * QK-norm (weights 0: none), rope from the cos/sin table at {@code rope}, K and V stored at the position held
     * by the device int at {@code pos} (device memory, so that a captured token graph serves every position).
     */
    void qkNormRopeStore(long qkv, long qNorm, long kNorm, long rope, long kCache, long vCache, long kvOut, Heads h,
                         long pos) {
        int threads = roundUp(Math.max(h.headDim(), h.valueDim()), 32);
        launch(qkNormRope, h.heads() + 2 * h.kvHeads(), threads, args.begin().ptr(qkv).ptr(qNorm).ptr(kNorm).ptr(rope)
                .ptr(kCache).ptr(vCache).ptr(kvOut).i32(h.heads()).i32(h.kvHeads()).i32(h.headDim()).i32(h.valueDim())
                .i32(h.ropeDims()).i32(h.neox() ? 1 : 0).ptr(pos).f32(h.eps()));
    }

    /**
     * Attention of the query heads at {@code q} over the cached positions up to the one at {@code pos} (a device
     * int) into {@code out}; a
     * position's values are {@code vStride} halves apart ({@code kvHeads · valueDim} for a separate value cache).
     */
    void attention(long q, long kCache, long vCache, int vStride, long scores, int scoreStride, long out, Heads h,
                   long pos, float scale) {
        attention(q, kCache, vCache, vStride, scores, scoreStride, out, 0, h, pos, scale);
    }

    /** As above, {@code out} also as Q8_0 at {@code outq} (0: none; needs {@link #quantizesOutput}). */
    void attention(long q, long kCache, long vCache, int vStride, long scores, int scoreStride, long out, long outq,
                   Heads h, long pos, float scale) {
        if (outq != 0 && !quantizesOutput(h)) {
            throw new IllegalArgumentException("value width " + h.valueDim() + " is not whole Q8_0 blocks");
        }
        launch(attention, h.heads(), ATT_THREADS, args.begin().ptr(q).ptr(kCache).ptr(vCache).ptr(scores)
                .i32(scoreStride).ptr(out).i32(h.heads()).i32(h.kvHeads()).i32(h.headDim()).i32(h.valueDim())
                .i32(vStride).ptr(pos).f32(scale).ptr(outq));
    }

    /** Whether {@link #attention} can write its output as Q8_0 too: each head's values are whole 32-value blocks. */
    static boolean quantizesOutput(Heads h) {
        return h.valueDim() % QK == 0;
    }

    /**
     * MLA: the rope parts of the {@code heads} queries at {@code q} rotated into {@code qOut}'s rows
     * ({@code qOutStride} floats apart, at {@code qOutOffset}), the kv_a projection at {@code kvpe} rotated and
     * normed, stored as the cache row at the position held at {@code pos} and F16-rounded in kvOut, or without a cache (0) only
     * in kvOut, unrounded.
     */
    void mlaRopeStore(long q, long kvpe, long kvNorm, long rope, long qOut, int qOutStride, int qOutOffset, long cache,
                      long kvOut, int heads, int qkNopeDim, int kvLoraRank, int qkRopeDim, boolean neox, long pos,
                      float eps) {
        launch(mlaRopeStore, heads + 1, NORM_THREADS, args.begin().ptr(q).ptr(kvpe).ptr(kvNorm).ptr(rope).ptr(qOut)
                .i32(qOutStride).i32(qOutOffset).ptr(cache).ptr(kvOut).i32(heads).i32(qkNopeDim + qkRopeDim).i32(qkNopeDim)
                .i32(kvLoraRank).i32(qkRopeDim).i32(neox ? 1 : 0).ptr(pos).f32(eps));
    }

    /** Decompressed MLA: per-head keys and values from kv_b's output {@code kv} and the rotated key part in {@code kvpe}. */
    void mlaKvExpandStore(long kv, long kvpe, long kCache, long vCache, long kvOut, int heads, int qkNopeDim,
                          int valueDim, int kvLoraRank, int qkRopeDim, long pos) {
        launch(mlaKvExpand, heads, NORM_THREADS, args.begin().ptr(kv).ptr(kvpe).ptr(kCache).ptr(vCache).ptr(kvOut)
                .i32(heads).i32(qkNopeDim).i32(valueDim).i32(kvLoraRank).i32(qkRopeDim).ptr(pos));
    }

    /**
     * Per-head products with a {@code [cols, rows, heads]} Q8_0 tensor {@code w}: {@code y[h·yStride + r] =
     * w_h,r · x_h}, the Q8_0 activations {@code x_h} {@code xStrideBytes} apart from {@code xq} on.
     */
    void perHead(DeviceMatrix w, int heads, long xq, long xStrideBytes, long y, int yStride) {
        cu.launch(gemvHeads, rowBlocks(w.rows()), heads, ROW_THREADS, 0, stream, args.begin().ptr(w.data()).ptr(xq)
                .i64(xStrideBytes).ptr(y).i32(yStride).i32(w.rows()).i32(w.cols()).params());
    }

    /** {@code values} floats at {@code x} to Q8_0 at {@code xq} ({@code values % 32 == 0}). */
    void quantize(long x, long xq, int values) {
        long blocks = values / QK;
        launch(quantize, Math.toIntExact((blocks + WARPS - 1) / WARPS), ROW_THREADS, args.begin().ptr(x).ptr(xq).i64(blocks));
    }

    /** {@code h = silu(gate · x) * (up · x)} for one token, {@link #quantized} matrices of {@code hidden} × {@code dim}. */
    void gateUpSilu(long gate, long up, long xq, long h, int hidden, int dim, GgmlType type) {
        launch(gateUp, rowBlocks(hidden), ROW_THREADS, args.begin().ptr(gate).ptr(up).ptr(xq).ptr(h).i32(hidden).i32(dim)
                .i32(type.id()));
    }

    /**
     * Top-{@code k} of the {@code n} router logits at {@code logits} into {@code ids} / {@code weights} (moe.cu's
     * moe_route: one warp); {@code bias} 0 when the block has none.
     */
    void moeRoute(long logits, long bias, int n, int k, boolean sigmoid, boolean normalize, float scale, long ids,
                  long weights) {
        launch(moeRoute, 1, 32, args.begin().ptr(logits).ptr(bias).i32(n).i32(k).i32(sigmoid ? 1 : 0)
                .i32(normalize ? 1 : 0).f32(scale).ptr(ids).ptr(weights));
    }

    /**
     * Gate, up and SiLU of the {@code k} routed experts whose pointers {@code table} holds, quantized into
     * {@code hq}'s k Q8_0 rows ({@code hidden % 32 == 0}: a block of {@link #MOE_GU_WARPS} warps per 32 rows);
     * gate and up of {@code type} ({@link #quantized}).
     */
    void moeGateUp(long table, long ids, long xq, long hq, int k, int hidden, int dim, GgmlType type) {
        cu.launch(moeGateUp, hidden / QK, k, 32 * MOE_GU_WARPS, 0, stream, args.begin().ptr(table).ptr(ids).ptr(xq)
                .ptr(hq).i32(hidden).i32(dim).i32(type.id()).params());
    }

    /**
     * {@code x += Σ_j weights[j] · down_j · hq_j} over the routed experts on the GPU, in routing order: their
     * down projections and the weighted sum in one launch (a warp per output row takes every expert's row; down
     * of {@code type}).
     */
    void moeDown(long table, long ids, long weights, long hq, long x, int dim, int hidden, int k, GgmlType type) {
        launch(moeDown, rowBlocks(dim), ROW_THREADS, args.begin().ptr(table).ptr(ids).ptr(weights).ptr(hq).ptr(x)
                .i32(dim).i32(hidden).i32(k).i32(type.id()));
    }

    /** {@code x += y} over {@code n} floats. */
    void add(long x, long y, int n) {
        launch(add, (n + 255) / 256, 256, args.begin().ptr(x).ptr(y).i32(n));
    }

    private void launch(MemorySegment kernel, int grid, int threads, LaunchArgs a) {
        cu.launch(kernel, grid, 1, threads, 0, stream, a.params());
    }

    private static int rowBlocks(int rows) {
        return (rows + WARPS - 1) / WARPS;
    }

    private static int roundUp(int n, int to) {
        return (n + to - 1) / to * to;
    }
}
