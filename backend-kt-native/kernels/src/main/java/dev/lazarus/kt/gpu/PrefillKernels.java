package dev.lazarus.kt.gpu;

import dev.lazarus.kt.gguf.GgmlType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Typed launches of the batched prompt kernels in {@code src/main/cuda/prefill.cu} on one stream: rows of
 * activations are tokens. The Q8_0 mat-mat kernels take tensor-core tiles of {@link #TC_ROWS} weight rows per block
 * against a tile of {@link #TILE} tokens (grid.y); the other types' take {@link #MM_ROWS} weight rows per
 * warp and {@link #MM_WARPS} warps per block against {@link #SUB} tokens of a tile (grid.y); the other kernels one
 * token per grid row.
 */
final class PrefillKernels {

    /** Slots per tile: TC_TOKENS in mma.cuh (the tokens of a Q8_0 tensor-core tile). */
    static final int TILE = 64;

    /** MM_WARPS and MM_ROWS of prefill.cu: warps per block of a mat-mat kernel, weight rows per warp. */
    private static final int MM_WARPS = 8;
    private static final int MM_ROWS = 2;
    private static final int MM_THREADS = 32 * MM_WARPS;
    /** TC_ROWS and TC_WARPS of mma.cuh: weight rows and warps per block of a Q8_0 tile. */
    private static final int TC_ROWS = 64;
    private static final int TC_THREADS = 32 * 4;
    /** PREFILL_SUB of prefill.cu: tokens per block of the other types' mat-mat kernels. */
    private static final int SUB = 8;
    private static final int MAX_NORM_THREADS = 1024;
    private static final int ATT_THREADS = LayerKernels.ATT_THREADS;

    private final CudaDriver cu;
    private final MemorySegment stream;
    private final LaunchArgs args;
    private final MemorySegment rmsNorm, gemm, gemmQ8, qkNormRope, attention, route, gateUp, gateUpQ8, down, downQ8,
            combine;

    PrefillKernels(CudaDriver cu, MemorySegment module, MemorySegment stream, Arena arena) {
        this.cu = cu;
        this.stream = stream;
        this.args = new LaunchArgs(arena);
        this.rmsNorm = cu.function(module, "rmsnorm_q8_rows");
        this.gemm = cu.function(module, "gemm_tokens");
        this.gemmQ8 = cu.function(module, "gemm_tokens_q8");
        this.qkNormRope = cu.function(module, "qk_norm_rope_tokens");
        this.attention = cu.function(module, "attention_tokens");
        this.route = cu.function(module, "moe_route_tokens");
        this.gateUp = cu.function(module, "moe_gate_up_tiles");
        this.gateUpQ8 = cu.function(module, "moe_gate_up_q8");
        this.down = cu.function(module, "moe_down_tiles");
        this.downQ8 = cu.function(module, "moe_down_q8");
        this.combine = cu.function(module, "moe_combine_tokens");
    }

    /** Per token row of {@code n} floats: {@code y = (x / rms(x)) * w}, {@code yq} (0: none) its Q8_0 rows. */
    void rmsNorm(long x, long w, long y, long yq, int n, float eps, int tokens) {
        launch(rmsNorm, tokens, 1, Math.min(MAX_NORM_THREADS, roundUp(n, 32)), args.begin().ptr(x).ptr(w).ptr(y)
                .ptr(yq).i32(n).f32(eps));
    }

    /**
     * {@code y[t·yStride + r] = (accumulate ? y : 0) + alpha · m_r · x_t} for the tokens' rows ({@code x} f32,
     * {@code xq} Q8_0; a {@link LayerKernels#quantized} matrix reads xq, F32 and F16 read x).
     */
    void matmul(DeviceMatrix m, long x, long xq, long y, int yStride, float alpha, boolean accumulate, int tokens) {
        if (!LayerKernels.supports(m.type())) {
            throw new IllegalArgumentException("no GPU matmul for " + m.type());
        }
        if (m.type() == GgmlType.Q8_0) {
            launch(gemmQ8, rowBlocks(m.rows(), TC_ROWS), rowBlocks(tokens, TILE), TC_THREADS, args.begin()
                    .ptr(m.data()).ptr(xq).ptr(y).i32(m.rows()).i32(m.cols()).i32(tokens).i32(yStride).f32(alpha)
                    .i32(accumulate ? 1 : 0));
            return;
        }
        launch(gemm, rowBlocks(m.rows(), MM_WARPS * MM_ROWS), rowBlocks(tokens, SUB), MM_THREADS, args.begin().ptr(m.data())
                .ptr(x).ptr(xq).ptr(y).i32(m.rows()).i32(m.cols()).i32(tokens).i32(yStride).f32(alpha).i32(accumulate ? 1 : 0)
                .i32(m.type().id()));
    }

    /** QK-norm, rope (one table row per token), K/V stored at positions {@code start..}, for every token. */
    void qkNormRopeStore(long qkv, int qkvWidth, long qNorm, long kNorm, long rope, long kCache, long vCache,
                         long kvOut, int kvOutStride, LayerKernels.Heads h, int start, int tokens) {
        int threads = roundUp(Math.max(h.headDim(), h.valueDim()), 32);
        launch(qkNormRope, h.heads() + 2 * h.kvHeads(), tokens, threads, args.begin().ptr(qkv).i32(qkvWidth)
                .ptr(qNorm).ptr(kNorm).ptr(rope).ptr(kCache).ptr(vCache).ptr(kvOut).i32(kvOutStride).i32(h.heads())
                .i32(h.kvHeads()).i32(h.headDim()).i32(h.valueDim()).i32(h.ropeDims()).i32(h.neox() ? 1 : 0)
                .i32(start).f32(h.eps()));
    }

    /** Causal attention of every token (token t over positions up to {@code start + t}). */
    void attention(long qkv, int qkvWidth, long kCache, long vCache, long scores, int scoreStride, long out,
                   int outStride, LayerKernels.Heads h, int vStride, int start, float scale, int tokens) {
        launch(attention, h.heads(), tokens, ATT_THREADS, args.begin().ptr(qkv).i32(qkvWidth).ptr(kCache).ptr(vCache)
                .ptr(scores).i32(scoreStride).ptr(out).i32(outStride).i32(h.heads()).i32(h.kvHeads())
                .i32(h.headDim()).i32(h.valueDim()).i32(vStride).i32(start).f32(scale));
    }

    /** Every token's top-{@code k} of its {@code n} router logits (rows {@code logitStride} floats apart). */
    void route(long logits, int logitStride, long bias, int n, int k, boolean sigmoid, boolean normalize, float scale,
               long ids, long weights, int tokens) {
        launch(route, tokens, 1, 32, args.begin().ptr(logits).i32(logitStride).ptr(bias).i32(n).i32(k)
                .i32(sigmoid ? 1 : 0).i32(normalize ? 1 : 0).f32(scale).ptr(ids).ptr(weights));
    }

    /** {@code h[s] = silu(gate · x) * (up · x)} for the slots of {@code tiles} tiles (see {@code ExpertGroups}). */
    void gateUp(long table, long tileList, int tiles, long slots, int k, long xq, long h, int hidden, int dim,
                GgmlType type) {
        if (type == GgmlType.Q8_0) {
            launch(gateUpQ8, rowBlocks(hidden, TC_ROWS), tiles, TC_THREADS, args.begin().ptr(table).ptr(tileList)
                    .ptr(slots).i32(k).ptr(xq).ptr(h).i32(hidden).i32(dim));
            return;
        }
        launch(gateUp, rowBlocks(hidden, MM_WARPS), subTiles(tiles), MM_THREADS, args.begin().ptr(table).ptr(tileList).ptr(slots)
                .i32(k).ptr(xq).ptr(h).i32(hidden).i32(dim).i32(type.id()));
    }

    /** {@code y[s] = down · hq[s]} for the slots of {@code tiles} tiles. */
    void down(long table, long tileList, int tiles, long slots, long hq, long y, int dim, int hidden, GgmlType type) {
        if (type == GgmlType.Q8_0) {
            launch(downQ8, rowBlocks(dim, TC_ROWS), tiles, TC_THREADS, args.begin().ptr(table).ptr(tileList).ptr(slots)
                    .ptr(hq).ptr(y).i32(dim).i32(hidden));
            return;
        }
        launch(down, rowBlocks(dim, MM_WARPS * MM_ROWS), subTiles(tiles), MM_THREADS, args.begin().ptr(table).ptr(tileList)
                .ptr(slots).ptr(hq).ptr(y).i32(dim).i32(hidden).i32(type.id()));
    }

    /** {@code x_t += Σ_j weights · y[t·k + j]} over each token's choices with a device expert, in routing order. */
    void combine(long table, long ids, long weights, long y, long x, int dim, int k, int tokens) {
        launch(combine, (dim + 255) / 256, tokens, 256, args.begin().ptr(table).ptr(ids).ptr(weights).ptr(y).ptr(x)
                .i32(dim).i32(k));
    }

    private void launch(MemorySegment kernel, int gridX, int gridY, int threads, LaunchArgs a) {
        cu.launch(kernel, gridX, gridY, threads, 0, stream, a.params());
    }

    /** Blocks of {@link #SUB} slots over {@code tiles} tiles of up to {@link #TILE} (past a tile's count: none). */
    private static int subTiles(int tiles) {
        return tiles * (TILE / SUB);
    }

    private static int rowBlocks(int rows, int perBlock) {
        return (rows + perBlock - 1) / perBlock;
    }

    private static int roundUp(int n, int to) {
        return (n + to - 1) / to * to;
    }
}
