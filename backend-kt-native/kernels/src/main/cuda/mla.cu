// Multi-head latent attention (deepseek2) kernels of the GPU layer path, in both forms of the CPU path's
// model.LatentAttention. Absorbed (GGUFs with attn_k_b / attn_v_b): the cache row of a position is
// [normed latent (kvLora) | rotated key (ropeDims)], shared by all heads; each head's query is mapped into
// latent space (k_b · q_nope), attends over the rows with the latent itself as the values (layers.cu's
// attention kernel, vStride = the row width) and the attended latent is decompressed per head (v_b).
// Decompressed (a fused attn_kv_b): the normed latent is expanded by kv_b into per-head key and value parts,
// each head's key completed by the shared rotated key part (mla_kv_expand_store), then plain multi-head
// attention.

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

// Blocks 0..heads-1: head h's rope part of q (at h * keyDim + nope, ropeDims wide) rotated into
// qOut[h * qOutStride + qOutOffset ...]: the tail of its latent-space query (absorbed: stride kvLora +
// ropeDims, offset kvLora) or in place (decompressed: qOut = q, stride keyDim, offset nope). Block `heads`:
// the kv_a projection [latent | key rope part] at kvpe: key part rotated, latent RMS-normed by kvNorm (the
// CPU's order: rotate, then norm; the two parts are disjoint); the row is stored at `*pos` of the F16
// cache and, F16-rounded, in kvOut (what the host cache gets), or, without a cache (decompressed), only in
// kvOut and unrounded, as the CPU hands it to kv_b. blockDim.x a multiple of 32, kvLora + ropeDims <= 1024.
extern "C" __global__ void mla_rope_store(const float* q, const float* __restrict__ kvpe,
                                          const float* __restrict__ kvNorm, const float* __restrict__ rope,
                                          float* qOut, int qOutStride, int qOutOffset, __half* __restrict__ cache,
                                          float* __restrict__ kvOut, int heads, int keyDim, int nope, int kvLora,
                                          int ropeDims, int neox, const int* __restrict__ pos, float eps) {
    __shared__ float row[1024];
    int position = *pos;
    __shared__ float red[32];
    int b = blockIdx.x, tid = threadIdx.x, width = kvLora + ropeDims, pairs = ropeDims / 2;
    if (b < heads) {
        for (int i = tid; i < ropeDims; i += blockDim.x) row[i] = q[b * keyDim + nope + i];
        __syncthreads();
        for (int i = tid; i < pairs; i += blockDim.x) rope_pair(row, i, pairs, neox, rope);
        __syncthreads();
        for (int i = tid; i < ropeDims; i += blockDim.x) qOut[b * qOutStride + qOutOffset + i] = row[i];
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
        if (cache == nullptr) {
            kvOut[i] = v;
            continue;
        }
        __half h = __float2half_rn(v);
        cache[(long long)position * width + i] = h;
        kvOut[i] = __half2float(h);
    }
}

// Decompressed MLA, one block per head h: from kv = kv_b · latent (per head nope key values, then valueDim
// values) and the rotated key part at kvpe[kvLora ...], head h's key [nope part | rope part] and value are
// stored at `position` of the F16 caches (keys heads × (nope + ropeDims), values heads × valueDim per
// position) and, F16-rounded, in kvOut ([keys | values], the host cache's layout).
extern "C" __global__ void mla_kv_expand_store(const float* __restrict__ kv, const float* __restrict__ kvpe,
                                               __half* __restrict__ kCache, __half* __restrict__ vCache,
                                               float* __restrict__ kvOut, int heads, int nope, int valueDim,
                                               int kvLora, int ropeDims, const int* __restrict__ pos) {
    int h = blockIdx.x, keyDim = nope + ropeDims, position = *pos;
    const float* src = kv + (long long)h * (nope + valueDim);
    for (int i = threadIdx.x; i < keyDim; i += blockDim.x) {
        __half k = __float2half_rn(i < nope ? src[i] : kvpe[kvLora + i - nope]);
        kCache[(long long)position * heads * keyDim + h * keyDim + i] = k;
        kvOut[h * keyDim + i] = __half2float(k);
    }
    for (int i = threadIdx.x; i < valueDim; i += blockDim.x) {
        __half v = __float2half_rn(src[nope + i]);
        vCache[(long long)position * heads * valueDim + h * valueDim + i] = v;
        kvOut[heads * keyDim + h * valueDim + i] = __half2float(v);
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
