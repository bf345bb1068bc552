// Batched prompt kernels of the kt-native GPU layer path (dev.lazarus.kt.gpu.GpuPrefill): a prompt's tokens
// computed together, block by block, instead of one decode pass each. Rows of activations are tokens
// (token t's row at t * stride); every kernel takes the tokens of a chunk at once.
//
// Each token's arithmetic is the decode kernels' (layers.cu, moe.cu), step for step: the same norm body, the
// same lane-to-block split and per-lane order of a Q8_0 row dot (so a tile of tokens sharing one load of a
// weight block sums exactly what row_dot sums for each of them), the same rope/store and attention bodies with
// the position taken from the token's row, the same routing. What differs from decoding the prompt token by
// token is only how the CPU-tier experts' outputs are added (see moe_combine_tokens).

#include "quants.cuh"

// Tokens per tile of the mat-mat kernels: a warp loads a weight block once and takes it against this many tokens.
#define PREFILL_TILE 8

// y_t = rmsnorm(x_t) * w for token t = blockIdx.x (rows of n floats), yq_t its Q8_0 form (yq may be null).
extern "C" __global__ void rmsnorm_q8_rows(const float* __restrict__ x, const float* __restrict__ w,
                                           float* __restrict__ y, uint8_t* __restrict__ yq, int n, float eps) {
    long long t = blockIdx.x;
    rmsnorm_row(x + t * n, w, y + t * n, yq == nullptr ? nullptr : yq + t * (n / QK) * BLOCK_BYTES, n, eps);
}

// The Q8_0 row w (blocks 32-value blocks) against up to PREFILL_TILE Q8_0 activations, the i-th at
// x + at(i) * xStride bytes (at: idx[i] / div, or i without idx); out[i] gets row_dot's sum for each (every lane).
__device__ __forceinline__ void q8_tile_dot(const uint8_t* __restrict__ w, const uint8_t* __restrict__ x,
                                            long long xStride, const int* __restrict__ idx, int div, int n,
                                            int blocks, float* out) {
    int lane = threadIdx.x & 31, quarter = lane & 3;
    const uint8_t* xs[PREFILL_TILE];
    float acc[PREFILL_TILE];
#pragma unroll
    for (int i = 0; i < PREFILL_TILE; i++) {
        xs[i] = i < n ? x + (long long)(idx == nullptr ? i : idx[i] / div) * xStride : x;
        acc[i] = 0.0f;
    }
    for (int b = lane >> 2; b < blocks; b += 8) {
        const uint8_t* wb = w + (long long)b * BLOCK_BYTES;
        int w0 = load_i8x4(wb + 2 + quarter * 8), w1 = load_i8x4(wb + 6 + quarter * 8);
        float dw = __half2float(*(const __half*)wb);
#pragma unroll
        for (int i = 0; i < PREFILL_TILE; i++) {
            if (i < n) {
                const uint8_t* xb = xs[i] + (long long)b * BLOCK_BYTES;
                int s = __dp4a(w0, load_i8x4(xb + 2 + quarter * 8), 0);
                s = __dp4a(w1, load_i8x4(xb + 6 + quarter * 8), s);
                acc[i] += (float)s * (dw * __half2float(*(const __half*)xb));
            }
        }
    }
#pragma unroll
    for (int i = 0; i < PREFILL_TILE; i++) out[i] = warp_sum(acc[i]);
}

// y[t * yStride + r] = (accumulate ? y[..] : 0) + alpha * (w_r . x_t) for the tokens of a tile (grid.y) and one
// row per warp (grid.x): Q8_0 weights tile by tile (one weight load for PREFILL_TILE tokens), the other quantized
// types row by row against xq (Q8_0 rows of cols values), F32 and F16 against the f32 rows of x.
extern "C" __global__ void gemm_tokens(const uint8_t* __restrict__ w, const float* __restrict__ x,
                                       const uint8_t* __restrict__ xq, float* __restrict__ y, int rows, int cols,
                                       int tokens, int yStride, float alpha, int accumulate, int type) {
    int r = blockIdx.x * WARPS + (threadIdx.x >> 5);
    int t0 = blockIdx.y * PREFILL_TILE;
    if (r >= rows) return;
    int n = tokens - t0 < PREFILL_TILE ? tokens - t0 : PREFILL_TILE;
    long long xqStride = (long long)(cols / QK) * BLOCK_BYTES;
    float v[PREFILL_TILE];
    if (type == GGML_Q8_0) {
        q8_tile_dot(w + (long long)r * xqStride, xq + t0 * xqStride, xqStride, nullptr, 1, n, cols / QK, v);
    } else {
        for (int i = 0; i < n; i++) {
            long long t = t0 + i;
            if (type == 0) {
                v[i] = float_row_dot((const float*)w + (long long)r * cols, x + t * cols, cols);
            } else if (type == 1) {
                v[i] = float_row_dot((const __half*)w + (long long)r * cols, x + t * cols, cols);
            } else {
                v[i] = typed_row_dot(type, w, r, cols, xq + t * xqStride);
            }
        }
    }
    if ((threadIdx.x & 31) == 0) {
        for (int i = 0; i < n; i++) {
            float* out = y + (long long)(t0 + i) * yStride + r;
            *out = accumulate ? *out + alpha * v[i] : alpha * v[i];
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
                heads, kvHeads, headDim, valueDim, vStride, start + (int)t + 1, scale, blockIdx.x);
}

// moe_route for token t = blockIdx.x (one warp each): logits at logits + t * logitStride, its k ids and weights
// at ids + t * k, weights + t * k.
extern "C" __global__ void moe_route_tokens(const float* __restrict__ logits, int logitStride,
                                            const float* __restrict__ bias, int n, int k, int sigmoid, int normalize,
                                            float scale, int* __restrict__ ids, float* __restrict__ weights) {
    long long t = blockIdx.x;
    route_token(logits + t * logitStride, bias, n, k, sigmoid, normalize, scale, ids + t * k, weights + t * k);
}

// Expert work of a block grouped by expert: tile i (grid.y) is tiles[3i..3i+2] = {expert, first, count}, the
// routing slots slots[first .. first + count) (slot s: token s / k's choice s % k, count <= PREFILL_TILE) of one
// expert, whose gate, up, down are table[3 * expert ..]. h[s * hidden + r] = silu(gate_r . x) * (up_r . x) for
// the slot's token x (Q8_0 rows of dim values at xq), one row per warp (grid.x).
extern "C" __global__ void moe_gate_up_tiles(const unsigned long long* __restrict__ table, const int* __restrict__ tiles,
                                             const int* __restrict__ slots, int k, const uint8_t* __restrict__ xq,
                                             float* __restrict__ h, int hidden, int dim, int type) {
    int r = blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (r >= hidden) return;
    const int* tile = tiles + 3 * blockIdx.y;
    const uint8_t* gate = (const uint8_t*)table[3 * tile[0]];
    const uint8_t* up = (const uint8_t*)table[3 * tile[0] + 1];
    const int* s = slots + tile[1];
    int n = tile[2];
    long long xStride = (long long)(dim / QK) * BLOCK_BYTES;
    float g[PREFILL_TILE], u[PREFILL_TILE];
    if (type == GGML_Q8_0) {
        // gate and up one after the other: row_dot2's two sums are each row_dot's order too
        q8_tile_dot(gate + (long long)r * xStride, xq, xStride, s, k, n, dim / QK, g);
        q8_tile_dot(up + (long long)r * xStride, xq, xStride, s, k, n, dim / QK, u);
    } else {
        for (int i = 0; i < n; i++) typed_row_dot2(type, gate, up, r, dim, xq + (s[i] / k) * xStride, &g[i], &u[i]);
    }
    if ((threadIdx.x & 31) == 0) {
        for (int i = 0; i < n; i++) h[(long long)s[i] * hidden + r] = g[i] / (1.0f + ggml_expf(0.0f - g[i], r, hidden)) * u[i];
    }
}

// y[s * dim + r] = down_r . hq_s for the slots of tile blockIdx.y (see moe_gate_up_tiles), hq holding one Q8_0
// row of hidden values per slot.
extern "C" __global__ void moe_down_tiles(const unsigned long long* __restrict__ table, const int* __restrict__ tiles,
                                          const int* __restrict__ slots, const uint8_t* __restrict__ hq,
                                          float* __restrict__ y, int dim, int hidden, int type) {
    int r = blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (r >= dim) return;
    const int* tile = tiles + 3 * blockIdx.y;
    const uint8_t* down = (const uint8_t*)table[3 * tile[0] + 2];
    const int* s = slots + tile[1];
    int n = tile[2];
    long long hStride = (long long)(hidden / QK) * BLOCK_BYTES;
    float v[PREFILL_TILE];
    if (type == GGML_Q8_0) {
        q8_tile_dot(down + (long long)r * hStride, hq, hStride, s, 1, n, hidden / QK, v);
    } else {
        for (int i = 0; i < n; i++) v[i] = typed_row_dot(type, down, r, hidden, hq + s[i] * hStride);
    }
    if ((threadIdx.x & 31) == 0) {
        for (int i = 0; i < n; i++) y[(long long)s[i] * dim + r] = v[i];
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
