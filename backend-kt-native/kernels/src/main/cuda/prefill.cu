// Batched prompt kernels of the kt-native GPU layer path (dev.lazarus.kt.gpu.GpuPrefill): a prompt's tokens
// computed together, block by block, instead of one decode pass each. Rows of activations are tokens
// (token t's row at t * stride); every kernel takes the tokens of a chunk at once.
//
// Each token's arithmetic is the decode kernels' (layers.cu, moe.cu) except the Q8_0 mat-mat products: the same
// norm body, the same rope/store and attention bodies with the position taken from the token's row, the same
// routing, the same row dots for the other quantized types. The Q8_0 products take int8 tensor-core tiles
// (mma.cuh), which fold each 32-value block's exact sum in block order where a decode row_dot folds per lane and
// quarter: the batched prompt's logits differ from decoding the prompt token by token by that rounding (and by
// how the CPU-tier experts' outputs are added, see moe_combine_tokens).

#include "quants.cuh"

// The Q8_0 mat-mat products take tensor-core tiles (mma.cuh) of TC_TOKENS tokens; the other types (and F32, F16)
// take a warp per weight row against PREFILL_SUB tokens of a tile per block, row by row with the decode dot.
#include "mma.cuh"

#define PREFILL_SUB 8
#define MM_WARPS 8
#define MM_ROWS 2

// y_t = rmsnorm(x_t) * w for token t = blockIdx.x (rows of n floats), yq_t its Q8_0 form (yq may be null).
extern "C" __global__ void rmsnorm_q8_rows(const float* __restrict__ x, const float* __restrict__ w,
                                           float* __restrict__ y, uint8_t* __restrict__ yq, int n, float eps) {
    long long t = blockIdx.x;
    rmsnorm_row(x + t * n, w, y + t * n, yq == nullptr ? nullptr : yq + t * (n / QK) * BLOCK_BYTES, n, eps);
}

// y[t * yStride + r] = (accumulate ? y[..] : 0) + alpha * (w_r . x_t) for a Q8_0 matrix: TC_ROWS rows (grid.x)
// against a tile of TC_TOKENS tokens (grid.y) per block of TC_WARPS warps, xq the tokens' Q8_0 rows.
extern "C" __global__ void gemm_tokens_q8(const uint8_t* __restrict__ w, const uint8_t* __restrict__ xq,
                                          float* __restrict__ y, int rows, int cols, int tokens, int yStride,
                                          float alpha, int accumulate) {
    int r0 = blockIdx.x * TC_ROWS, t0 = blockIdx.y * TC_TOKENS;
    int n = tokens - t0 < TC_TOKENS ? tokens - t0 : TC_TOKENS;
    long long stride = (long long)(cols / QK) * BLOCK_BYTES;
    const uint8_t* ws[1] = {w};
    float acc[1][TC_TOKENS / 8][4];
    q8_tile<1>(ws, r0, rows, stride, xq + t0 * stride, stride, nullptr, 1, n, cols / QK, acc);
#pragma unroll
    for (int nt = 0; nt < TC_TOKENS / 8; nt++) {
#pragma unroll
        for (int c = 0; c < 4; c++) {
            int r = r0 + tile_row(c), i = tile_token(nt, c);
            if (r < rows && i < n) {
                float* out = y + (long long)(t0 + i) * yStride + r;
                *out = accumulate ? *out + alpha * acc[0][nt][c] : alpha * acc[0][nt][c];
            }
        }
    }
}

// gemm_tokens_q8 for the other types: MM_ROWS rows per warp, MM_WARPS warps a block (grid.x), PREFILL_SUB tokens
// (grid.y) row by row against xq (Q8_0 rows of cols values), F32 and F16 against the f32 rows of x.
extern "C" __global__ void gemm_tokens(const uint8_t* __restrict__ w, const float* __restrict__ x,
                                       const uint8_t* __restrict__ xq, float* __restrict__ y, int rows, int cols,
                                       int tokens, int yStride, float alpha, int accumulate, int type) {
    int r0 = (blockIdx.x * MM_WARPS + (threadIdx.x >> 5)) * MM_ROWS;
    int t0 = blockIdx.y * PREFILL_SUB;
    int n = tokens - t0 < PREFILL_SUB ? tokens - t0 : PREFILL_SUB;
    long long xqStride = (long long)(cols / QK) * BLOCK_BYTES;
    for (int j = 0; j < MM_ROWS && r0 + j < rows; j++) {
        for (int i = 0; i < n; i++) {
            long long t = t0 + i;
            float v;
            if (type == 0) {
                v = float_row_dot((const float*)w + (long long)(r0 + j) * cols, x + t * cols, cols);
            } else if (type == 1) {
                v = float_row_dot((const __half*)w + (long long)(r0 + j) * cols, x + t * cols, cols);
            } else {
                v = typed_row_dot(type, w, r0 + j, cols, xq + t * xqStride);
            }
            if ((threadIdx.x & 31) == 0) {
                float* out = y + t * yStride + r0 + j;
                *out = accumulate ? *out + alpha * v : alpha * v;
            }
        }
    }
}

// qk_norm_rope_store for token t = blockIdx.y at position start + t: its projections at qkv + t * qkvWidth, its
// rope table at rope + t * ropeDims, its [k | v] out at kvOut + t * kvOutStride.
extern "C" __global__ void qk_norm_rope_tokens(float* __restrict__ qkv, int qkvWidth, const float* __restrict__ qNorm,
                                               const float* __restrict__ kNorm, const float* __restrict__ rope,
                                               __half* __restrict__ kCache, __half* __restrict__ vCache,
                                               float* __restrict__ kvOut, int kvOutStride, int heads, int kvHeads,
                                               int headDim, int valueDim, int ropeDims, int neox, int start, float eps) {
    long long t = blockIdx.y;
    qk_norm_rope_head(qkv + t * qkvWidth, qNorm, kNorm, rope + t * ropeDims, kCache, vCache, kvOut + t * kvOutStride,
                      heads, kvHeads, headDim, valueDim, ropeDims, neox, start + (int)t, eps, blockIdx.x);
}

// Causal attention of the prompt: head blockIdx.x of token t = blockIdx.y over positions 0..start + t (the
// cache holds every token of the chunk: qk_norm_rope_tokens ran first), its query at qkv + t * qkvWidth, its
// scores at scores + t * heads * scoreStride, its output at out + t * outStride.
extern "C" __global__ void attention_tokens(const float* __restrict__ qkv, int qkvWidth,
                                            const __half* __restrict__ kCache, const __half* __restrict__ vCache,
                                            float* __restrict__ scores, int scoreStride, float* __restrict__ out,
                                            int outStride, int heads, int kvHeads, int headDim, int valueDim,
                                            int vStride, int start, float scale) {
    long long t = blockIdx.y;
    attend_head(qkv + t * qkvWidth, kCache, vCache, scores + t * heads * scoreStride, scoreStride, out + t * outStride,
                heads, kvHeads, headDim, valueDim, vStride, start + (int)t + 1, scale, blockIdx.x, nullptr);
}

// moe_route for token t = blockIdx.x (one warp each): logits at logits + t * logitStride, its k ids and weights
// at ids + t * k, weights + t * k.
extern "C" __global__ void moe_route_tokens(const float* __restrict__ logits, int logitStride,
                                            const float* __restrict__ bias, int n, int k, int sigmoid, int normalize,
                                            float scale, int* __restrict__ ids, float* __restrict__ weights) {
    long long t = blockIdx.x;
    route_token(logits + t * logitStride, bias, n, k, sigmoid, normalize, scale, ids + t * k, weights + t * k);
}

// Expert work of a block grouped by expert: tile i is tiles[3i..3i+2] = {expert, first, count}, the routing slots
// slots[first .. first + count) (slot s: token s / k's choice s % k, count <= TC_TOKENS) of one expert, whose gate,
// up, down are table[3 * expert ..]. h[s * hidden + r] = silu(gate_r . x) * (up_r . x) for the slot's token x
// (Q8_0 rows of dim values at xq): Q8_0 experts as tensor-core tiles, TC_ROWS rows of gate and up (grid.x) against
// tile blockIdx.y.
extern "C" __global__ void moe_gate_up_q8(const unsigned long long* __restrict__ table, const int* __restrict__ tiles,
                                          const int* __restrict__ slots, int k, const uint8_t* __restrict__ xq,
                                          float* __restrict__ h, int hidden, int dim) {
    int r0 = blockIdx.x * TC_ROWS;
    const int* tile = tiles + 3 * blockIdx.y;
    const uint8_t* ws[2] = {(const uint8_t*)table[3 * tile[0]], (const uint8_t*)table[3 * tile[0] + 1]};
    const int* s = slots + tile[1];
    int n = tile[2];
    long long stride = (long long)(dim / QK) * BLOCK_BYTES;
    float acc[2][TC_TOKENS / 8][4];
    q8_tile<2>(ws, r0, hidden, stride, xq, stride, s, k, n, dim / QK, acc);
#pragma unroll
    for (int nt = 0; nt < TC_TOKENS / 8; nt++) {
#pragma unroll
        for (int c = 0; c < 4; c++) {
            int r = r0 + tile_row(c), i = tile_token(nt, c);
            if (r < hidden && i < n) {
                float gate = acc[0][nt][c], up = acc[1][nt][c];
                h[(long long)s[i] * hidden + r] = gate / (1.0f + ggml_expf(0.0f - gate, r, hidden)) * up;
            }
        }
    }
}

// moe_gate_up_q8 for the other types: one row of gate and up per warp, MM_WARPS warps a block (grid.x), the
// PREFILL_SUB slots of sub-tile blockIdx.y % (TC_TOKENS / PREFILL_SUB) of tile blockIdx.y / (TC_TOKENS / PREFILL_SUB).
extern "C" __global__ void moe_gate_up_tiles(const unsigned long long* __restrict__ table, const int* __restrict__ tiles,
                                             const int* __restrict__ slots, int k, const uint8_t* __restrict__ xq,
                                             float* __restrict__ h, int hidden, int dim, int type) {
    int r = blockIdx.x * MM_WARPS + (threadIdx.x >> 5);
    const int* tile = tiles + 3 * (blockIdx.y / (TC_TOKENS / PREFILL_SUB));
    int first = blockIdx.y % (TC_TOKENS / PREFILL_SUB) * PREFILL_SUB;
    if (r >= hidden || first >= tile[2]) return;
    const uint8_t* gate = (const uint8_t*)table[3 * tile[0]];
    const uint8_t* up = (const uint8_t*)table[3 * tile[0] + 1];
    const int* s = slots + tile[1] + first;
    int n = tile[2] - first < PREFILL_SUB ? tile[2] - first : PREFILL_SUB;
    long long xStride = (long long)(dim / QK) * BLOCK_BYTES;
    for (int i = 0; i < n; i++) {
        float g, u;
        typed_row_dot2(type, gate, up, r, dim, xq + (s[i] / k) * xStride, &g, &u);
        if ((threadIdx.x & 31) == 0) h[(long long)s[i] * hidden + r] = g / (1.0f + ggml_expf(0.0f - g, r, hidden)) * u;
    }
}

// y[s * dim + r] = down_r . hq_s for the slots of tile blockIdx.y (see moe_gate_up_q8), hq holding one Q8_0 row of
// hidden values per slot: TC_ROWS rows (grid.x) a block.
extern "C" __global__ void moe_down_q8(const unsigned long long* __restrict__ table, const int* __restrict__ tiles,
                                       const int* __restrict__ slots, const uint8_t* __restrict__ hq,
                                       float* __restrict__ y, int dim, int hidden) {
    int r0 = blockIdx.x * TC_ROWS;
    const int* tile = tiles + 3 * blockIdx.y;
    const uint8_t* ws[1] = {(const uint8_t*)table[3 * tile[0] + 2]};
    const int* s = slots + tile[1];
    int n = tile[2];
    long long stride = (long long)(hidden / QK) * BLOCK_BYTES;
    float acc[1][TC_TOKENS / 8][4];
    q8_tile<1>(ws, r0, dim, stride, hq, stride, s, 1, n, hidden / QK, acc);
#pragma unroll
    for (int nt = 0; nt < TC_TOKENS / 8; nt++) {
#pragma unroll
        for (int c = 0; c < 4; c++) {
            int r = r0 + tile_row(c), i = tile_token(nt, c);
            if (r < dim && i < n) y[(long long)s[i] * dim + r] = acc[0][nt][c];
        }
    }
}

// moe_down_q8 for the other types: MM_ROWS rows per warp, MM_WARPS warps a block (grid.x), sub-tiles as
// moe_gate_up_tiles.
extern "C" __global__ void moe_down_tiles(const unsigned long long* __restrict__ table, const int* __restrict__ tiles,
                                          const int* __restrict__ slots, const uint8_t* __restrict__ hq,
                                          float* __restrict__ y, int dim, int hidden, int type) {
    int r0 = (blockIdx.x * MM_WARPS + (threadIdx.x >> 5)) * MM_ROWS;
    const int* tile = tiles + 3 * (blockIdx.y / (TC_TOKENS / PREFILL_SUB));
    int first = blockIdx.y % (TC_TOKENS / PREFILL_SUB) * PREFILL_SUB;
    if (first >= tile[2]) return;
    const uint8_t* down = (const uint8_t*)table[3 * tile[0] + 2];
    const int* s = slots + tile[1] + first;
    int n = tile[2] - first < PREFILL_SUB ? tile[2] - first : PREFILL_SUB;
    long long hStride = (long long)(hidden / QK) * BLOCK_BYTES;
    for (int j = 0; j < MM_ROWS && r0 + j < dim; j++) {
        for (int i = 0; i < n; i++) {
            float v = typed_row_dot(type, down, r0 + j, hidden, hq + s[i] * hStride);
            if ((threadIdx.x & 31) == 0) y[(long long)s[i] * dim + r0 + j] = v;
        }
    }
}

// x_t[r] += sum over token t's (= blockIdx.y) k choices, in routing order, of weights[j] * y[t * k + j][r], for
// the choices whose expert has a pointer in table (a zero entry: a CPU expert, whose sum the host adds behind).
// With the CPU-tier experts staged (their table entries point to the staging buffer) their outputs join this
// sum, where decoding adds them apart: the one place the batched prompt may round differently.
extern "C" __global__ void moe_combine_tokens(const unsigned long long* __restrict__ table, const int* __restrict__ ids,
                                              const float* __restrict__ weights, const float* __restrict__ y,
                                              float* __restrict__ x, int dim, int k) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    long long t = blockIdx.y;
    if (r >= dim) return;
    float sum = 0.0f;
    for (int j = 0; j < k; j++) {
        if (table[3 * ids[t * k + j] + 2] == 0) continue;
        sum = __fadd_rn(sum, __fmul_rn(y[(t * k + j) * dim + r], weights[t * k + j]));
    }
    x[t * dim + r] += sum;
}
