// Transformer-layer kernels of the kt-native GPU layer path (dev.lazarus.kt.gpu.GpuLayerPath): RMS norm,
// matrix-vector products (Q8_0 against a Q8_0 activation, F32, F16), QK-norm + RoPE + KV store, attention of
// one query over the cached positions, and an add. Decode only: every kernel computes one token.
//
// Numerics follow the CPU path closely but not bit for bit (float reductions run as trees here): RMS norm is
// (x * scale) * w, activations meet Q8_0 weights quantized like the CPU's (quantize_block), the KV cache holds
// F16 (llama-server's cache type, which the CPU path rounds to as well), the attention query and the softmax
// probabilities are rounded to F16 before their products, as the CPU's AttentionKernel does.

#include "quants.cuh"

// The sum (or max) of v over the whole block, returned to every thread. blockDim.x is a multiple of 32;
// red holds one value per warp and may be reused right after (the leading barrier protects it).
__device__ float block_sum(float v, float* red) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    v = warp_sum(v);
    __syncthreads();
    if (lane == 0) red[warp] = v;
    __syncthreads();
    // every warp folds the partials as a tree: a loop over 32 warps' values was 32 dependent shared loads on
    // the critical path of a 1024-thread norm
    return warp_sum(lane < warps ? red[lane] : 0.0f);
}

__device__ float block_max(float v, float* red) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    v = warp_max(v);
    __syncthreads();
    if (lane == 0) red[warp] = v;
    __syncthreads();
    float m = __int_as_float(0xff800000);
    for (int w = 0; w < warps; w++) m = fmaxf(m, red[w]);
    return m;
}

// y = (x * 1/rms(x)) * w over n values, by one block; yq (may be null) gets y as Q8_0 (n % 32 == 0). The
// i-th pass of the block covers values [i * blockDim, (i+1) * blockDim): each warp holds one whole Q8_0 block.
__device__ __forceinline__ void rmsnorm_row(const float* __restrict__ x, const float* __restrict__ w,
                                            float* __restrict__ y, uint8_t* __restrict__ yq, int n, float eps) {
    __shared__ float red[32];
    float ss = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        float v = x[i];
        ss += v * v;
    }
    float mean = block_sum(ss, red) / (float)n;
    float scale = 1.0f / sqrtf(mean + eps);
    for (int base = 0; base < n; base += blockDim.x) {
        int i = base + threadIdx.x;
        float v = 0.0f;
        if (i < n) {
            v = x[i] * scale * w[i];
            y[i] = v;
        }
        if (yq != nullptr && base + (int)(threadIdx.x & ~31u) < n) {
            quantize_block(v, yq + (long long)(i / QK) * BLOCK_BYTES);
        }
    }
}

extern "C" __global__ void rmsnorm_q8(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y,
                                      uint8_t* __restrict__ yq, int n, float eps) {
    rmsnorm_row(x, w, y, yq, n, eps);
}

// y[r] = (accumulate ? y[r] : 0) + alpha * (w_r . x): one warp per row, w of type (quants.cuh: Q8_0, Q4_0,
// K-quants), x Q8_0. Residual adds (alpha 1) and routed experts' weighted sums (alpha: the routing weight) land
// directly in the residual stream.
extern "C" __global__ void gemv_q_acc(const uint8_t* __restrict__ w, const uint8_t* __restrict__ xq,
                                      float* __restrict__ y, int rows, int cols, float alpha, int accumulate, int type) {
    int r = blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (r >= rows) return;
    float v = typed_row_dot(type, w, r, cols, xq);
    if ((threadIdx.x & 31) == 0) {
        y[r] = accumulate ? y[r] + alpha * v : alpha * v;
    }
}

// The q, k and v projections in one launch: y = [w0 . x | w1 . x | w2 . x] (one warp per row of the three), the
// three of one type (quants.cuh).
extern "C" __global__ void gemv3_q(const uint8_t* __restrict__ w0, const uint8_t* __restrict__ w1,
                                   const uint8_t* __restrict__ w2, int rows0, int rows1, int rows2,
                                   const uint8_t* __restrict__ xq, float* __restrict__ y, int cols, int type) {
    int r = blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (r >= rows0 + rows1 + rows2) return;
    const uint8_t* w = w0;
    int local = r;
    if (r >= rows0 + rows1) {
        w = w2;
        local = r - rows0 - rows1;
    } else if (r >= rows0) {
        w = w1;
        local = r - rows0;
    }
    float v = typed_row_dot(type, w, local, cols, xq);
    if ((threadIdx.x & 31) == 0) {
        y[r] = v;
    }
}

__device__ __forceinline__ float weight_value(float w) { return w; }
__device__ __forceinline__ float weight_value(__half w) { return __half2float(w); }
// The activation as the CPU meets each weight type: F16 weights see it rounded to F16 (ggml's vec_dot_f16).
__device__ __forceinline__ float activation_value(float x, const float*) { return x; }
__device__ __forceinline__ float activation_value(float x, const __half*) { return __half2float(__float2half_rn(x)); }

// Dot product of one F32 or F16 row with an f32 activation, by a whole warp.
template <typename T>
__device__ __forceinline__ float float_row_dot(const T* __restrict__ row, const float* __restrict__ x, int cols) {
    float acc = 0.0f;
    for (int i = threadIdx.x & 31; i < cols; i += 32) acc += weight_value(row[i]) * activation_value(x[i], row);
    return warp_sum(acc);
}

// F32 rows of a multiple of 128 values at 16-byte aligned addresses (the router): four consecutive values a lane,
// one 16-byte load each, four loads in flight: a warp's 2048-value row was 64 dependent 4-byte loads a lane.
__device__ __forceinline__ float float_row_dot(const float* __restrict__ row, const float* __restrict__ x, int cols) {
    int lane = threadIdx.x & 31;
    if ((cols & 127) != 0 || (((uintptr_t)row | (uintptr_t)x) & 15) != 0) {
        float acc = 0.0f;
        for (int i = lane; i < cols; i += 32) acc += row[i] * x[i];
        return warp_sum(acc);
    }
    float acc = 0.0f;
#pragma unroll 4
    for (int i = lane * 4; i < cols; i += 128) {
#ifdef __CUDA_ARCH__
        float4 w = *(const float4*)(row + i), v = *(const float4*)(x + i);
        acc += w.x * v.x;
        acc += w.y * v.y;
        acc += w.z * v.z;
        acc += w.w * v.w;
#else
        for (int e = 0; e < 4; e++) acc += row[i + e] * x[i + e];
#endif
    }
    return warp_sum(acc);
}

template <typename T>
__device__ __forceinline__ void gemv_float(const T* __restrict__ w, const float* __restrict__ x, float* __restrict__ y,
                                           int rows, int cols, float alpha, int accumulate) {
    int r = blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (r >= rows) return;
    float v = float_row_dot(w + (long long)r * cols, x, cols);
    if ((threadIdx.x & 31) == 0) y[r] = accumulate ? y[r] + alpha * v : alpha * v;
}

// y[r] = (accumulate ? y[r] : 0) + alpha * (w_r . x) for F32 weights (router, head, attention of F32 files):
// one warp per row.
extern "C" __global__ void gemv_f32(const float* __restrict__ w, const float* __restrict__ x, float* __restrict__ y,
                                    int rows, int cols, float alpha, int accumulate) {
    gemv_float(w, x, y, rows, cols, alpha, accumulate);
}

// The same for F16 weights.
extern "C" __global__ void gemv_f16(const __half* __restrict__ w, const float* __restrict__ x, float* __restrict__ y,
                                    int rows, int cols, float alpha, int accumulate) {
    gemv_float(w, x, y, rows, cols, alpha, accumulate);
}

// h[r] = silu(gate_r . x) * (up_r . x) for a dense FFN of F32 or F16 weights (experts.cu has the Q8_0 one).
template <typename T>
__device__ __forceinline__ void gate_up_silu_float(const T* __restrict__ gate, const T* __restrict__ up,
                                                   const float* __restrict__ x, float* __restrict__ h, int rows, int cols) {
    int r = blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (r >= rows) return;
    float g = float_row_dot(gate + (long long)r * cols, x, cols);
    float u = float_row_dot(up + (long long)r * cols, x, cols);
    if ((threadIdx.x & 31) == 0) h[r] = g / (1.0f + ggml_expf(0.0f - g, r, rows)) * u;
}

extern "C" __global__ void gate_up_silu_f32(const float* __restrict__ gate, const float* __restrict__ up,
                                            const float* __restrict__ x, float* __restrict__ h, int rows, int cols) {
    gate_up_silu_float(gate, up, x, h, rows, cols);
}

extern "C" __global__ void gate_up_silu_f16(const __half* __restrict__ gate, const __half* __restrict__ up,
                                            const float* __restrict__ x, float* __restrict__ h, int rows, int cols) {
    gate_up_silu_float(gate, up, x, h, rows, cols);
}

// One block per head of the projected [q heads | k heads | v heads]: q and k heads RMS-normed per head
// (qwen3's QK-norm; a null weight skips it) and rotated with this position's cos/sin pairs (rope: cos at 2i,
// sin at 2i+1; neox pairs (i, i + ropeDims/2), otherwise (2i, 2i+1)); q is written back in place, k and v are
// stored at `position` (read from device memory at pos, so that one captured CUDA graph serves every
// token) in the F16 caches and, as the F16-rounded floats, in kvOut ([k | v], what the host's cache gets). blockDim.x >= max(headDim, valueDim), a multiple of 32, headDim <= 1024.
// (The body for head b of one token at position; qk_norm_rope_store takes b from the grid, the prompt's
// batched form in prefill.cu a token per grid row.)
__device__ __forceinline__ void qk_norm_rope_head(float* __restrict__ qkv, const float* __restrict__ qNorm,
                                                  const float* __restrict__ kNorm, const float* __restrict__ rope,
                                                  __half* __restrict__ kCache, __half* __restrict__ vCache,
                                                  float* __restrict__ kvOut, int heads, int kvHeads, int headDim,
                                                  int valueDim, int ropeDims, int neox, int position, float eps,
                                                  int b) {
    __shared__ float head[1024];
    __shared__ float red[32];
    int i = threadIdx.x;
    int kw = kvHeads * headDim, vw = kvHeads * valueDim;
    if (b >= heads + kvHeads) {
        int vh = b - heads - kvHeads;
        if (i < valueDim) {
            __half h = __float2half_rn(qkv[heads * headDim + kw + vh * valueDim + i]);
            vCache[(long long)position * vw + vh * valueDim + i] = h;
            kvOut[kw + vh * valueDim + i] = __half2float(h);
        }
        return;
    }
    bool isKey = b >= heads;
    int kh = b - heads;
    float* x = isKey ? qkv + heads * headDim + kh * headDim : qkv + b * headDim;
    const float* norm = isKey ? kNorm : qNorm;
    float v = i < headDim ? x[i] : 0.0f;
    if (norm != nullptr) {
        float mean = block_sum(v * v, red) / (float)headDim;
        float scale = 1.0f / sqrtf(mean + eps);
        v = i < headDim ? v * scale * norm[i] : 0.0f;
    }
    if (i < headDim) head[i] = v;
    __syncthreads();
    int pairs = ropeDims / 2;
    if (i < pairs) {
        int i0 = neox ? i : 2 * i;
        int i1 = neox ? i + pairs : 2 * i + 1;
        float c = rope[2 * i], s = rope[2 * i + 1];
        float x0 = head[i0], x1 = head[i1];
        head[i0] = fmaf(x0, c, -(x1 * s));
        head[i1] = fmaf(x0, s, x1 * c);
    }
    __syncthreads();
    if (i < headDim) {
        float y = head[i];
        if (isKey) {
            __half h = __float2half_rn(y);
            kCache[(long long)position * kw + kh * headDim + i] = h;
            kvOut[kh * headDim + i] = __half2float(h);
        } else {
            x[i] = y;
        }
    }
}

extern "C" __global__ void qk_norm_rope_store(float* __restrict__ qkv, const float* __restrict__ qNorm,
                                              const float* __restrict__ kNorm, const float* __restrict__ rope,
                                              __half* __restrict__ kCache, __half* __restrict__ vCache,
                                              float* __restrict__ kvOut, int heads, int kvHeads, int headDim,
                                              int valueDim, int ropeDims, int neox, const int* __restrict__ pos,
                                              float eps) {
    qk_norm_rope_head(qkv, qNorm, kNorm, rope, kCache, vCache, kvOut, heads, kvHeads, headDim, valueDim, ropeDims,
                      neox, *pos, eps, blockIdx.x);
}

#define ATT_THREADS 1024

// One block of ATT_THREADS threads per query head h (grouped: kv head h / (heads / kvHeads)): scores of the
// F16-rounded query against cached keys 0..*pos (a warp per position; the current position read from device
// memory), scaled softmax, probabilities
// rounded to F16, then out[d] = sum_t p_t * v_t[d], value dimensions in chunks of at most ATT_THREADS, each
// chunk by ATT_THREADS / chunk groups of positions. Position t's keys of kv head g start at
// t * kvHeads * headDim + g * headDim, its values at t * vStride + g * valueDim (vStride: kvHeads * valueDim for
// a separate value cache; MLA passes the latent cache as both, vStride its row width). scores holds
// scoreStride floats per head (>= positions). headDim <= 1024. outq (may be null; valueDim % 32 == 0) gets out as
// Q8_0 too, what the output projection reads, without a launch of its own.
// (The body for query head h over positions 0..positions-1; attention takes h from the grid.)
__device__ __forceinline__ void attend_head(const float* __restrict__ q, const __half* __restrict__ kCache,
                                            const __half* __restrict__ vCache, float* __restrict__ scores,
                                            int scoreStride, float* __restrict__ out, int heads, int kvHeads,
                                            int headDim, int valueDim, int vStride, int positions, float scale, int h,
                                            uint8_t* __restrict__ outq) {
    __shared__ float qh[1024];
    __shared__ float red[32];
    __shared__ float part[ATT_THREADS];
    int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, warps = blockDim.x >> 5;
    int kvh = h / (heads / kvHeads);
    int kw = kvHeads * headDim;
    for (int i = tid; i < headDim; i += blockDim.x) qh[i] = __half2float(__float2half_rn(q[h * headDim + i]));
    __syncthreads();
    float* s = scores + (long long)h * scoreStride;
    float localMax = __int_as_float(0xff800000);
    for (int t = warp; t < positions; t += warps) {
        const __half* k = kCache + (long long)t * kw + kvh * headDim;
        float acc = 0.0f;
        for (int i = lane; i < headDim; i += 32) acc += qh[i] * __half2float(k[i]);
        acc = warp_sum(acc) * scale;
        if (lane == 0) s[t] = acc;
        localMax = fmaxf(localMax, acc);
    }
    float top = block_max(localMax, red); // its barriers also publish the scores written above
    float sum = 0.0f;
    for (int t = tid; t < positions; t += blockDim.x) {
        float e = ggml_vexpf(s[t] - top); // the CPU softmax pads rows to whole vector chunks: all lanes
        s[t] = e;
        sum += e;
    }
    sum = block_sum(sum, red);
    float inv = 1.0f / sum;
    for (int t = tid; t < positions; t += blockDim.x) s[t] = __half2float(__float2half_rn(s[t] * inv));
    __syncthreads();
    for (int d0 = 0; d0 < valueDim; d0 += blockDim.x) {
        int chunk = valueDim - d0 < (int)blockDim.x ? valueDim - d0 : (int)blockDim.x;
        int groups = blockDim.x / chunk;
        int g = tid / chunk, d = d0 + tid % chunk;
        float acc = 0.0f;
        if (g < groups) {
            const __half* v = vCache + kvh * valueDim + d;
            for (int t = g; t < positions; t += groups) acc += s[t] * __half2float(v[(long long)t * vStride]);
        }
        part[tid] = acc;
        __syncthreads();
        if (tid < chunk) {
            float total = 0.0f;
            for (int j = 0; j < groups; j++) total += part[j * chunk + tid];
            out[h * valueDim + d0 + tid] = total;
            if (outq != nullptr) quantize_block(total, outq + (long long)(h * valueDim + d0 + tid) / QK * BLOCK_BYTES);
        }
        __syncthreads(); // part is refilled by the next chunk
    }
}

extern "C" __global__ void attention(const float* __restrict__ q, const __half* __restrict__ kCache,
                                     const __half* __restrict__ vCache, float* __restrict__ scores, int scoreStride,
                                     float* __restrict__ out, int heads, int kvHeads, int headDim, int valueDim,
                                     int vStride, const int* __restrict__ pos, float scale, uint8_t* __restrict__ outq) {
    attend_head(q, kCache, vCache, scores, scoreStride, out, heads, kvHeads, headDim, valueDim, vStride, *pos + 1,
                scale, blockIdx.x, outq);
}

// x[i] += y[i]
extern "C" __global__ void add_f32(float* __restrict__ x, const float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += y[i];
}
