/*
 * What every part of the native kernels shares: the activation's layout in native memory, the f16 load, ggml's
 * horizontal sum, the activation group size and the forced-inline marker. Included by each header that uses them.
 */
#ifndef LZ_COMMON_H
#define LZ_COMMON_H
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * An activation in native memory, written by the Java side (dev.lazarus.kt.tensor.NativeKernels):
 * int32 capacity at 0; int8 quants at 64; f32 scales (one per 32 values for Q8_0, per 256 for Q8_K) after the
 * quants; int32 sums of 16 quants (Q8_K) after the scales.
 */
typedef struct {
    const int8_t *q;
    const float *scales;
    const int32_t *bsums;
} lz_act;

static inline lz_act lz_act_at(int64_t address, int32_t block) {
    const uint8_t *base = (const uint8_t *) (intptr_t) address;
    int32_t cap = *(const int32_t *) base;
    lz_act a;
    a.q = (const int8_t *) (base + 64);
    a.scales = (const float *) (base + 64 + cap);
    a.bsums = (const int32_t *) (base + 64 + cap + 4 * (cap / block));
    return a;
}

static inline float lz_f16(const uint8_t *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return _cvtsh_ss(h);
}

/* ggml's hsum_float_8: the upper four lanes onto the lower, then (0 + 2) + (1 + 3). */
static inline float lz_hsum8(__m256 v) {
    float a[8];
    _mm256_storeu_ps(a, v);
    float r0 = a[4] + a[0], r1 = a[5] + a[1], r2 = a[6] + a[2], r3 = a[7] + a[3];
    return (r0 + r2) + (r1 + r3);
}

/* Up to LZ_GROUP activations per pass over a row: each block's weights are loaded and unpacked once for all. */
#define LZ_GROUP 4

#define LZ_INLINE static inline __attribute__((always_inline))

#endif
