// Routed-expert kernels of the kt-native GPU tier (dev.lazarus.kt.gpu.CudaExpertTier).
//
// Compiled ahead of time to PTX (scripts/device/gpu-check.sh: nvcc -ptx -arch=sm_90) and loaded at run time
// with cuModuleLoadData; the Java side binds them by these extern "C" names. No --use_fast_math: the
// rounding must follow the CPU path (IEEE division, round-to-nearest-even), which the tests compare against.
//
// Numerics follow the CPU kernels (tensor.Activation, tensor.FloatKernels) and ggml's Q8_0 path:
// activations are quantized to Q8_0 (scale = f16(amax / 127), q = rint(x * 127 / amax)), each 32-block
// dot product is an exact integer sum scaled by d_w * d_x, and the SwiGLU hidden vector is re-quantized
// before the down projection.
//
// Q8_0 block: 2 bytes f16 scale, then 32 int8 quants (34 bytes, so scales are 2-byte aligned).

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

// One warp per 32-value block: x (count blocks of f32) -> y (count Q8_0 blocks).
extern "C" __global__ void quantize_q8_0(const float* __restrict__ x, uint8_t* __restrict__ y, long long count) {
    long long b = (long long)blockIdx.x * WARPS + (threadIdx.x >> 5);
    int lane = threadIdx.x & 31;
    if (b >= count) return;
    float v = x[b * QK + lane];
    float amax = warp_max(fabsf(v));
    float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    uint8_t* blk = y + b * BLOCK_BYTES;
    blk[2 + lane] = (uint8_t)(int8_t)__float2int_rn(rintf(v * id));
    if (lane == 0) {
        *(__half*)blk = __float2half_rn(amax / 127.0f);
    }
}

// Dot product of one Q8_0 row with one Q8_0 activation, by a whole warp: 4 lanes per block, 8 quants each.
__device__ __forceinline__ float row_dot(const uint8_t* __restrict__ w, const uint8_t* __restrict__ x, int blocks) {
    int lane = threadIdx.x & 31;
    int quarter = lane & 3;
    float acc = 0.0f;
    for (int b = lane >> 2; b < blocks; b += 8) {
        const uint8_t* wb = w + (long long)b * BLOCK_BYTES;
        const uint8_t* xb = x + (long long)b * BLOCK_BYTES;
        const int8_t* wq = (const int8_t*)(wb + 2 + quarter * 8);
        const int8_t* xq = (const int8_t*)(xb + 2 + quarter * 8);
        int s = 0;
#pragma unroll
        for (int i = 0; i < 8; i++) s += (int)wq[i] * (int)xq[i];
        acc += (float)s * (__half2float(*(const __half*)wb) * __half2float(*(const __half*)xb));
    }
    return warp_sum(acc);
}

// h[t][r] = silu(gate_r . x_t) * (up_r . x_t); one warp per row r, grid.y over tokens t.
extern "C" __global__ void gate_up_silu_q8_0(const uint8_t* __restrict__ gate, const uint8_t* __restrict__ up,
                                             const uint8_t* __restrict__ xq, float* __restrict__ h,
                                             int rows, int cols) {
    int r = blockIdx.x * WARPS + (threadIdx.x >> 5);
    int t = blockIdx.y;
    if (r >= rows) return;
    int blocks = cols / QK;
    long long rowBytes = (long long)blocks * BLOCK_BYTES;
    const uint8_t* x = xq + t * rowBytes;
    float g = row_dot(gate + r * rowBytes, x, blocks);
    float u = row_dot(up + r * rowBytes, x, blocks);
    if ((threadIdx.x & 31) == 0) {
        h[(long long)t * rows + r] = g / (1.0f + expf(-g)) * u;
    }
}

// y[t][r] = w_r . x_t; one warp per row r, grid.y over tokens t.
extern "C" __global__ void gemv_q8_0(const uint8_t* __restrict__ w, const uint8_t* __restrict__ xq,
                                     float* __restrict__ y, int rows, int cols) {
    int r = blockIdx.x * WARPS + (threadIdx.x >> 5);
    int t = blockIdx.y;
    if (r >= rows) return;
    int blocks = cols / QK;
    long long rowBytes = (long long)blocks * BLOCK_BYTES;
    float v = row_dot(w + r * rowBytes, xq + t * rowBytes, blocks);
    if ((threadIdx.x & 31) == 0) {
        y[(long long)t * rows + r] = v;
    }
}
