// Multi-head latent attention (deepseek2) kernels of the GPU layer path, in the absorbed form the CPU path's
// model.LatentAttention uses when the GGUF has attn_k_b / attn_v_b: the cache row of a position is
// [normed latent (kvLora) | rotated key (ropeDims)], shared by all heads; each head's query is mapped into
// latent space (k_b · q_nope), attends over the rows with the latent itself as the values (layers.cu's
// attention kernel, vStride = the row width) and the attended latent is decompressed per head (v_b).

#include "common.cuh"

// Rotates one head's pair (i0, i1) in place by this position's cos/sin (pair index i).
__device__ __forceinline__ void rope_pair(float* x, int i, int pairs, int neox, const float* rope) {
    int i0 = neox ? i : 2 * i;
    int i1 = neox ? i + pairs : 2 * i + 1;
    float c = rope[2 * i], s = rope[2 * i + 1];
    float x0 = x[i0], x1 = x[i1];
    x[i0] = fmaf(x0, c, -(x1 * s));
    x[i1] = fmaf(x0, s, x1 * c);
}

// Blocks 0..heads-1: head h's rope part of q (at h * keyDim + nope, ropeDims wide) rotated into the tail of
// its latent-space query, fullQ[h * (kvLora + ropeDims) + kvLora ...]. Block `heads`: the kv_a projection
// [latent | key rope part] at kvpe: key part rotated, latent RMS-normed by kvNorm (the CPU's order: rotate,
// then norm; the two parts are disjoint), the row stored at `position` of the F16 cache and, F16-rounded,
// in kvOut (what the host cache gets). blockDim.x a multiple of 32, kvLora + ropeDims <= 1024.
extern "C" __global__ void mla_rope_store(const float* __restrict__ q, const float* __restrict__ kvpe,
                                          const float* __restrict__ kvNorm, const float* __restrict__ rope,
                                          float* __restrict__ fullQ, __half* __restrict__ cache,
                                          float* __restrict__ kvOut, int heads, int keyDim, int nope, int kvLora,
                                          int ropeDims, int neox, int position, float eps) {
    __shared__ float row[1024];
    __shared__ float red[32];
    int b = blockIdx.x, tid = threadIdx.x, width = kvLora + ropeDims, pairs = ropeDims / 2;
    if (b < heads) {
        for (int i = tid; i < ropeDims; i += blockDim.x) row[i] = q[b * keyDim + nope + i];
        __syncthreads();
        for (int i = tid; i < pairs; i += blockDim.x) rope_pair(row, i, pairs, neox, rope);
        __syncthreads();
        for (int i = tid; i < ropeDims; i += blockDim.x) fullQ[b * width + kvLora + i] = row[i];
        return;
    }
    float ss = 0.0f;
    for (int i = tid; i < width; i += blockDim.x) {
        float v = kvpe[i];
        row[i] = v;
        if (i < kvLora) ss += v * v;
    }
    float mean = block_sum(ss, red) / (float)kvLora; // its barriers also publish row
    float scale = 1.0f / sqrtf(mean + eps);
    for (int i = tid; i < pairs; i += blockDim.x) rope_pair(row + kvLora, i, pairs, neox, rope);
    __syncthreads();
    for (int i = tid; i < width; i += blockDim.x) {
        float v = i < kvLora ? row[i] * scale * kvNorm[i] : row[i];
        __half h = __float2half_rn(v);
        cache[(long long)position * width + i] = h;
        kvOut[i] = __half2float(h);
    }
}

// Per-head products with per-head Q8_0 matrices (k_b, v_b): y[h * yStride + r] = w_h,r . x_h where
// w_h = w + h * rows * (cols / 32) * 34 bytes and x_h = xq + h * xStride bytes (a Q8_0 activation). One warp
// per row, grid.y over heads.
extern "C" __global__ void gemv_q8_0_heads(const uint8_t* __restrict__ w, const uint8_t* __restrict__ xq,
                                           long long xStride, float* __restrict__ y, int yStride, int rows,
                                           int cols) {
    int r = blockIdx.x * WARPS + (threadIdx.x >> 5);
    int h = blockIdx.y;
    if (r >= rows) return;
    int blocks = cols / QK;
    long long rowBytes = (long long)blocks * BLOCK_BYTES;
    float v = row_dot(w + ((long long)h * rows + r) * rowBytes, xq + h * xStride, blocks);
    if ((threadIdx.x & 31) == 0) {
        y[(long long)h * yStride + r] = v;
    }
}
