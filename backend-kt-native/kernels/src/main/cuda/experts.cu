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

#include "quants.cuh"

// One warp per 32-value block: x (count blocks of f32) -> y (count Q8_0 blocks).
extern "C" __global__ void quantize_q8_0(const float* __restrict__ x, uint8_t* __restrict__ y, long long count) {
    long long b = (long long)blockIdx.x * WARPS + (threadIdx.x >> 5);
    int lane = threadIdx.x & 31;
    if (b >= count) return;
    quantize_block(x[b * QK + lane], y + b * BLOCK_BYTES);
}

// h[t][r] = silu(gate_r . x_t) * (up_r . x_t); one warp per row r, grid.y over tokens t; gate and up of type
// (quants.cuh), x_t Q8_0.
extern "C" __global__ void gate_up_silu_q(const uint8_t* __restrict__ gate, const uint8_t* __restrict__ up,
                                          const uint8_t* __restrict__ xq, float* __restrict__ h,
                                          int rows, int cols, int type) {
    int r = blockIdx.x * WARPS + (threadIdx.x >> 5);
    int t = blockIdx.y;
    if (r >= rows) return;
    const uint8_t* x = xq + t * ((long long)(cols / QK) * BLOCK_BYTES);
    float g, u;
    typed_row_dot2(type, gate, up, r, cols, x, &g, &u);
    if ((threadIdx.x & 31) == 0) {
        h[(long long)t * rows + r] = g / (1.0f + ggml_expf(0.0f - g, r, rows)) * u;
    }
}

// y[t][r] = w_r . x_t; one warp per row r, grid.y over tokens t; w of type (quants.cuh), x_t Q8_0.
extern "C" __global__ void gemv_q(const uint8_t* __restrict__ w, const uint8_t* __restrict__ xq,
                                  float* __restrict__ y, int rows, int cols, int type) {
    int r = blockIdx.x * WARPS + (threadIdx.x >> 5);
    int t = blockIdx.y;
    if (r >= rows) return;
    float v = typed_row_dot(type, w, r, cols, xq + t * ((long long)(cols / QK) * BLOCK_BYTES));
    if ((threadIdx.x & 31) == 0) {
        y[(long long)t * rows + r] = v;
    }
}
