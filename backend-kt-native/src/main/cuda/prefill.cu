// Batched prompt kernels of the kt-native GPU layer path (dev.lazarus.kt.gpu.GpuPrefill): a prompt's tokens
// computed together, block by block, instead of one decode pass each. Rows of activations are tokens
// (token t's row at t * stride); every kernel takes the tokens of a chunk at once.
//
// Each token's arithmetic is the decode kernels' (layers.cu, moe.cu), step for step: the same norm body, the
// same lane-to-block split and per-lane order of a Q8_0 row dot (so a tile of tokens sharing one load of a
// weight block sums exactly what row_dot sums for each of them: q8_mm), the same rope/store and attention bodies with
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

// The mat-mat kernels run MM_WARPS warps a block, each warp MM_ROWS weight rows against the block's tile of up to
// PREFILL_TILE tokens, whose Q8_0 activations the block stages in shared memory MM_CHUNK 32-value blocks at a time
// (quants as aligned words, scales as floats): a warp then reads a weight block once for all the tile's tokens and
// the activations with aligned shared loads instead of the 2-byte global loads a 34-byte block allows.
#define MM_WARPS 8
#define MM_ROWS 2
#define MM_CHUNK 64

// Row dots of up to MM_ROWS Q8_0 rows wr[j] (null: none) of `blocks` 32-value blocks against up to PREFILL_TILE
// activations, the i-th at x + at(i) * xStride bytes (at: idx[i] / div, or i without idx); out[j][i] gets exactly
// row_dot's sum (the same lanes take the same blocks in the same order: chunks start at multiples of 8 blocks).
// Every thread of the block calls it (it synchronises the block).
__device__ __forceinline__ void q8_mm(const uint8_t* const* wr, const uint8_t* __restrict__ x, long long xStride,
                                      const int* __restrict__ idx, int div, int n, int blocks,
                                      float out[MM_ROWS][PREFILL_TILE]) {
    __shared__ int sq[PREFILL_TILE * MM_CHUNK * 8];
    __shared__ float sd[PREFILL_TILE * MM_CHUNK];
    int lane = threadIdx.x & 31, quarter = lane & 3;
    float acc[MM_ROWS][PREFILL_TILE];
#pragma unroll
    for (int j = 0; j < MM_ROWS; j++) {
#pragma unroll
        for (int i = 0; i < PREFILL_TILE; i++) acc[j][i] = 0.0f;
    }
    for (int c0 = 0; c0 < blocks; c0 += MM_CHUNK) {
        int cb = blocks - c0 < MM_CHUNK ? blocks - c0 : MM_CHUNK;
        __syncthreads(); // the previous chunk's reads are done
        for (int e = threadIdx.x; e < n * cb * 8; e += blockDim.x) {
            int i = e / (cb * 8), b = e / 8 % cb, word = e % 8;
            const uint8_t* xb = x + (long long)(idx == nullptr ? i : idx[i] / div) * xStride + (long long)(c0 + b) * BLOCK_BYTES;
            sq[(i * MM_CHUNK + b) * 8 + word] = load_i8x4(xb + 2 + 4 * word);
            if (word == 0) sd[i * MM_CHUNK + b] = __half2float(*(const __half*)xb);
        }
        __syncthreads();
        for (int b = lane >> 2; b < cb; b += 8) {
#pragma unroll
            for (int j = 0; j < MM_ROWS; j++) {
                if (wr[j] == nullptr) continue;
                const uint8_t* wb = wr[j] + (long long)(c0 + b) * BLOCK_BYTES;
                int w0 = load_i8x4(wb + 2 + quarter * 8), w1 = load_i8x4(wb + 6 + quarter * 8);
                float dw = __half2float(*(const __half*)wb);
#pragma unroll
                for (int i = 0; i < PREFILL_TILE; i++) {
                    if (i < n) {
                        const int* q = sq + (i * MM_CHUNK + b) * 8 + quarter * 2;
                        int s = __dp4a(w0, q[0], 0);
                        s = __dp4a(w1, q[1], s);
                        acc[j][i] += (float)s * (dw * sd[i * MM_CHUNK + b]);
                    }
                }
            }
        }
    }
#pragma unroll
    for (int j = 0; j < MM_ROWS; j++) {
#pragma unroll
        for (int i = 0; i < PREFILL_TILE; i++) out[j][i] = warp_sum(acc[j][i]);
    }
}

// y[t * yStride + r] = (accumulate ? y[..] : 0) + alpha * (w_r . x_t) for the tokens of a tile (grid.y) and
// MM_ROWS rows per warp, MM_WARPS warps a block (grid.x): Q8_0 weights through q8_mm, the other quantized types row
// by row against xq (Q8_0 rows of cols values), F32 and F16 against the f32 rows of x.
extern "C" __global__ void gemm_tokens(const uint8_t* __restrict__ w, const float* __restrict__ x,
                                       const uint8_t* __restrict__ xq, float* __restrict__ y, int rows, int cols,
                                       int tokens, int yStride, float alpha, int accumulate, int type) {
    int r0 = (blockIdx.x * MM_WARPS + (threadIdx.x >> 5)) * MM_ROWS;
    int t0 = blockIdx.y * PREFILL_TILE;
    int n = tokens - t0 < PREFILL_TILE ? tokens - t0 : PREFILL_TILE;
    long long xqStride = (long long)(cols / QK) * BLOCK_BYTES;
    float v[MM_ROWS][PREFILL_TILE];
    if (type == GGML_Q8_0) {
        const uint8_t* wr[MM_ROWS];
        for (int j = 0; j < MM_ROWS; j++) wr[j] = r0 + j < rows ? w + (long long)(r0 + j) * xqStride : nullptr;
        q8_mm(wr, xq + t0 * xqStride, xqStride, nullptr, 1, n, cols / QK, v);
    } else {
        for (int j = 0; j < MM_ROWS && r0 + j < rows; j++) {
            for (int i = 0; i < n; i++) {
                long long t = t0 + i;
                if (type == 0) {
                    v[j][i] = float_row_dot((const float*)w + (long long)(r0 + j) * cols, x + t * cols, cols);
                } else if (type == 1) {
                    v[j][i] = float_row_dot((const __half*)w + (long long)(r0 + j) * cols, x + t * cols, cols);
                } else {
                    v[j][i] = typed_row_dot(type, w, r0 + j, cols, xq + t * xqStride);
                }
            }
        }
    }
    if ((threadIdx.x & 31) == 0) {
        for (int j = 0; j < MM_ROWS && r0 + j < rows; j++) {
            for (int i = 0; i < n; i++) {
                float* out = y + (long long)(t0 + i) * yStride + r0 + j;
                *out = accumulate ? *out + alpha * v[j][i] : alpha * v[j][i];
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

// Expert work of a block grouped by expert: tile i (grid.y) is tiles[3i..3i+2] = {expert, first, count}, the
// routing slots slots[first .. first + count) (slot s: token s / k's choice s % k, count <= PREFILL_TILE) of one
// expert, whose gate, up, down are table[3 * expert ..]. h[s * hidden + r] = silu(gate_r . x) * (up_r . x) for
// the slot's token x (Q8_0 rows of dim values at xq), one row of gate and up per warp, MM_WARPS warps a block.
extern "C" __global__ void moe_gate_up_tiles(const unsigned long long* __restrict__ table, const int* __restrict__ tiles,
                                             const int* __restrict__ slots, int k, const uint8_t* __restrict__ xq,
                                             float* __restrict__ h, int hidden, int dim, int type) {
    int r = blockIdx.x * MM_WARPS + (threadIdx.x >> 5); // one row of gate and of up per warp
    const int* tile = tiles + 3 * blockIdx.y;
    const uint8_t* gate = (const uint8_t*)table[3 * tile[0]];
    const uint8_t* up = (const uint8_t*)table[3 * tile[0] + 1];
    const int* s = slots + tile[1];
    int n = tile[2];
    long long xStride = (long long)(dim / QK) * BLOCK_BYTES;
    float gu[MM_ROWS][PREFILL_TILE];
    if (type == GGML_Q8_0) {
        // gate and up as the warp's two rows: each sum is row_dot2's (itself row_dot's order for each)
        const uint8_t* wr[MM_ROWS] = {r < hidden ? gate + r * xStride : nullptr, r < hidden ? up + r * xStride : nullptr};
        q8_mm(wr, xq, xStride, s, k, n, dim / QK, gu);
    } else if (r < hidden) {
        for (int i = 0; i < n; i++) typed_row_dot2(type, gate, up, r, dim, xq + (s[i] / k) * xStride, &gu[0][i], &gu[1][i]);
    }
    if ((threadIdx.x & 31) == 0 && r < hidden) {
        for (int i = 0; i < n; i++) {
            h[(long long)s[i] * hidden + r] = gu[0][i] / (1.0f + ggml_expf(0.0f - gu[0][i], r, hidden)) * gu[1][i];
        }
    }
}

// y[s * dim + r] = down_r . hq_s for the slots of tile blockIdx.y (see moe_gate_up_tiles), hq holding one Q8_0
// row of hidden values per slot.
extern "C" __global__ void moe_down_tiles(const unsigned long long* __restrict__ table, const int* __restrict__ tiles,
                                          const int* __restrict__ slots, const uint8_t* __restrict__ hq,
                                          float* __restrict__ y, int dim, int hidden, int type) {
    int r0 = (blockIdx.x * MM_WARPS + (threadIdx.x >> 5)) * MM_ROWS;
    const int* tile = tiles + 3 * blockIdx.y;
    const uint8_t* down = (const uint8_t*)table[3 * tile[0] + 2];
    const int* s = slots + tile[1];
    int n = tile[2];
    long long hStride = (long long)(hidden / QK) * BLOCK_BYTES;
    float v[MM_ROWS][PREFILL_TILE];
    if (type == GGML_Q8_0) {
        const uint8_t* wr[MM_ROWS];
        for (int j = 0; j < MM_ROWS; j++) wr[j] = r0 + j < dim ? down + (long long)(r0 + j) * hStride : nullptr;
        q8_mm(wr, hq, hStride, s, 1, n, hidden / QK, v);
    } else {
        for (int j = 0; j < MM_ROWS && r0 + j < dim; j++) {
            for (int i = 0; i < n; i++) v[j][i] = typed_row_dot(type, down, r0 + j, hidden, hq + s[i] * hStride);
        }
    }
    if ((threadIdx.x & 31) == 0) {
        for (int j = 0; j < MM_ROWS && r0 + j < dim; j++) {
            for (int i = 0; i < n; i++) y[(long long)s[i] * dim + r0 + j] = v[j][i];
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
