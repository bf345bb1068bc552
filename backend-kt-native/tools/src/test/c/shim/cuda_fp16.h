/*
 * Just enough of CUDA's device-side vocabulary to compile src/main/cuda/*.cu as C++ for the fake driver
 * (fake_cuda.cpp): qualifiers vanish, __half is _Float16 (IEEE binary16, round-to-nearest-even like
 * __float2half_rn), and threadIdx / warp shuffles come from the fiber-per-lane warp emulation there.
 */
#pragma once
#include <math.h>
#include <stdint.h>
#include <string.h>

#define __global__
#define __launch_bounds__(...)
#define __device__
#define __forceinline__ inline
#define __restrict__ __restrict
// one block runs at a time, so block-shared memory is plain static storage
#define __shared__ static

struct FakeDim { unsigned x, y, z; };
struct FakeLane;
extern FakeDim blockIdx, blockDim;
extern FakeLane *fake_current_lane;
FakeDim &fake_thread_idx(FakeLane *lane);
#define threadIdx (fake_thread_idx(fake_current_lane))

typedef _Float16 __half;
static inline float __half2float(__half h) { return (float)h; }
static inline __half __float2half_rn(float f) { return (__half)f; }
static inline int __float2int_rn(float f) { return (int)nearbyintf(f); }
float __shfl_xor_sync(unsigned mask, float v, int lane_mask);
void __syncthreads();
// four signed byte products summed onto c (the int8 dot-product instruction)
static inline int __dp4a(int a, int b, int c) {
    for (int i = 0; i < 4; i++) c += (int)(int8_t)(a >> (8 * i)) * (int)(int8_t)(b >> (8 * i));
    return c;
}
// round-to-nearest single operations, never contracted into a fused multiply-add
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, sizeof f); return f; }
