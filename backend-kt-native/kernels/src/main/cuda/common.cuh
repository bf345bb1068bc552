// Shared by the kt-native kernels (experts.cu, layers.cu): Q8_0 layout, warp reductions, the Q8_0 row dot.
// Q8_0 block: 2 bytes f16 scale, then 32 int8 quants (34 bytes, so scales are 2-byte aligned).
#pragma once

#include <cuda_fp16.h>
#include <stdint.h>

#define QK 32
#define BLOCK_BYTES 34
#define WARPS 4

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Quantizes one 32-value block held one value per lane of a warp (every lane calls it): the CPU's
// Q8_0 activation rounding, scale = f16(amax / 127), q = rint(v * 127 / amax).
__device__ __forceinline__ void quantize_block(float v, uint8_t* blk) {
    int lane = threadIdx.x & 31;
    float amax = warp_max(fabsf(v));
    float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    blk[2 + lane] = (uint8_t)(int8_t)__float2int_rn(rintf(v * id));
    if (lane == 0) {
        *(__half*)blk = __float2half_rn(amax / 127.0f);
    }
}

// Four int8 quants as one int, from two 16-bit loads: a Q8_0 block is 34 bytes, so its quants are only
// 2-byte aligned (a 4-byte load would fault on every other block).
__device__ __forceinline__ int load_i8x4(const uint8_t* p) {
    const uint16_t* h = (const uint16_t*)p;
    return (int)((uint32_t)h[0] | ((uint32_t)h[1] << 16));
}

// One 32-value block's share of a lane of four (8 quants each): the exact integer sum (two dp4a: the same sum
// as a byte loop in a third of the instructions), scaled by the two blocks' scales.
__device__ __forceinline__ float block_dot(const uint8_t* __restrict__ wb, const uint8_t* __restrict__ xb, int quarter) {
    const uint8_t* wq = wb + 2 + quarter * 8;
    const uint8_t* xq = xb + 2 + quarter * 8;
    int s = __dp4a(load_i8x4(wq), load_i8x4(xq), 0);
    s = __dp4a(load_i8x4(wq + 4), load_i8x4(xq + 4), s);
    return (float)s * (__half2float(*(const __half*)wb) * __half2float(*(const __half*)xb));
}

// Dot product of one Q8_0 row with one Q8_0 activation, by a whole warp: 4 lanes per block, 8 blocks per pass.
// Unrolled so that several passes' loads are in flight at once: a decode matvec is bound by memory latency
// more than by bandwidth (one row per warp, a few passes each).
__device__ __forceinline__ float row_dot(const uint8_t* __restrict__ w, const uint8_t* __restrict__ x, int blocks) {
    int lane = threadIdx.x & 31;
    int quarter = lane & 3;
    float acc = 0.0f;
#pragma unroll 4
    for (int b = lane >> 2; b < blocks; b += 8) {
        acc += block_dot(w + (long long)b * BLOCK_BYTES, x + (long long)b * BLOCK_BYTES, quarter);
    }
    return warp_sum(acc);
}

// Two rows against one activation in one pass (gate and up of a SwiGLU), their loads interleaved; each sum
// in row_dot's order.
__device__ __forceinline__ void row_dot2(const uint8_t* __restrict__ w0, const uint8_t* __restrict__ w1,
                                         const uint8_t* __restrict__ x, int blocks, float* d0, float* d1) {
    int lane = threadIdx.x & 31;
    int quarter = lane & 3;
    float a0 = 0.0f, a1 = 0.0f;
#pragma unroll 2
    for (int b = lane >> 2; b < blocks; b += 8) {
        long long at = (long long)b * BLOCK_BYTES;
        a0 += block_dot(w0 + at, x + at, quarter);
        a1 += block_dot(w1 + at, x + at, quarter);
    }
    *d0 = warp_sum(a0);
    *d1 = warp_sum(a1);
}

// ggml_v_expf, the polynomial exp of llama.cpp's AVX-512 CPU loops, step for step (the CPU path's
// model.GgmlExp.vexp): rows of n values take it for i < n rounded down to 16 and expf for the tail, so SiLU
// and softmax round like the CPU path and a Q8_0 re-quantization of their output rarely lands elsewhere.
__device__ __forceinline__ float ggml_vexpf(float x) {
    const float shift = 0x1.8p23f;
    float z = fmaf(x, 0x1.715476p+0f, shift);
    float n = z - shift;
    float b = fmaf(-n, 0x1.7f7d1cp-20f, fmaf(-n, 0x1.62e4p-1f, x));
    if (fabsf(n) > 192.0f) return n <= 0.0f ? 0.0f : __int_as_float(0x7f800000);
    float u = b * b;
    float j = fmaf(fmaf(fmaf(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, fmaf(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)), u,
                   fmaf(0x1.ffffecp-1f, b, 1.0f));
    return ldexpf(j, (int)n);
}

__device__ __forceinline__ float ggml_expf(float x, int i, int n) {
    return i < (n & -16) ? ggml_vexpf(x) : expf(x);
}
