/*
 * The activation conversion (dev.lazarus.kt.tensor.Activation#set for Q8_0 and Q8_K), bit for bit: ggml's
 * quantize_row_q8_0 and quantize_row_q8_K as the Java reference writes them. Writes the Java arrays (quants as floats,
 * scales, 16-value sums; heap arrays passed through FFM) and the native form of lz_driver.h's lz_act in one pass.
 * Each ISA unit includes it with LZ_QUANT_NAME defined; the vectors are 256-bit in both (a block is 32 or 256 values,
 * the conversion is a few percent of a kernel's memory traffic). Blocks with NaN, infinities or a maximum so small that
 * its reciprocal overflows take the scalar statement of the Java code, Java's casts included (saturating, NaN to 0).
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#ifndef LZ_QUANT_COMMON
#define LZ_QUANT_COMMON

/* Java's float-to-int cast: saturating, NaN to 0. */
static inline int32_t lz_java_f2i(float f) {
    if (f != f) {
        return 0;
    }
    if (f >= 2147483648.0f) {
        return INT32_MAX;
    }
    if (f <= -2147483648.0f) {
        return INT32_MIN;
    }
    return (int32_t) f;
}

/* Java's (byte) of a float: to int, then its low eight bits. */
static inline int8_t lz_java_f2b(float f) {
    return (int8_t) (uint8_t) (uint32_t) lz_java_f2i(f);
}

/* FloatOps.roundF16: to the nearest f16 (ties to even), back to f32. */
static inline float lz_round_f16(float f) {
    return _cvtsh_ss(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}

/* Activation.quantizeQ8_0, value by value (Math.max keeps a NaN). */
static void lz_q8_0_scalar(const float *x, float *values, float *scale, int8_t *q) {
    float amax = 0;
    for (int i = 0; i < 32; i++) {
        float a = fabsf(x[i]);
        amax = amax != amax ? amax : a != a ? a : amax >= a ? amax : a;
    }
    *scale = lz_round_f16(amax / 127.0f);
    float id = amax != 0 ? 127.0f / amax : 0;
    for (int i = 0; i < 32; i++) {
        values[i] = rintf(x[i] * id);
        q[i] = lz_java_f2b(values[i]);
    }
}

/* Q8KQuantizer.quantizeScalar, then Activation's zero block: the first value of largest magnitude maps to -127. */
static void lz_q8_k_scalar(const float *x, float *values, float *scale, int32_t *bsums, int8_t *q) {
    float amax = 0, max = 0;
    for (int i = 0; i < 256; i++) {
        float a = fabsf(x[i]);
        if (a > amax) {
            amax = a;
            max = x[i];
        }
    }
    if (amax == 0) {
        for (int i = 0; i < 256; i++) {
            values[i] = 0;
            q[i] = 0;
        }
        for (int g = 0; g < 16; g++) {
            bsums[g] = 0;
        }
        *scale = 0;
        return;
    }
    float iscale = -127.0f / max;
    for (int g = 0; g < 16; g++) {
        uint32_t sum = 0; /* Java's int sum wraps */
        for (int i = 16 * g; i < 16 * g + 16; i++) {
            int32_t v = lz_java_f2i(rintf(iscale * x[i]));
            v = v < 127 ? v : 127;
            values[i] = (float) v;
            q[i] = (int8_t) (uint8_t) (uint32_t) v;
            sum += (uint32_t) v;
        }
        bsums[g] = (int32_t) sum;
    }
    *scale = 1 / iscale;
}

/* The largest magnitude of n (a multiple of 32) values, or -1 where one is NaN; four chains of max (its latency). */
static inline __attribute__((always_inline)) float lz_amax(const float *x, int n) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 m[4], nan = _mm256_setzero_ps();
    for (int k = 0; k < 4; k++) {
        m[k] = _mm256_setzero_ps();
    }
    for (int i = 0; i < n; i += 32) {
        for (int k = 0; k < 4; k++) {
            __m256 v = _mm256_loadu_ps(x + i + 8 * k);
            m[k] = _mm256_max_ps(m[k], _mm256_andnot_ps(sign, v));
            nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        }
    }
    if (_mm256_movemask_ps(nan)) {
        return -1;
    }
    float l[8];
    _mm256_storeu_ps(l, _mm256_max_ps(_mm256_max_ps(m[0], m[1]), _mm256_max_ps(m[2], m[3])));
    float amax = l[0];
    for (int i = 1; i < 8; i++) {
        amax = l[i] > amax ? l[i] : amax;
    }
    return amax;
}

/* The first of 256 values whose magnitude is amax (one is). */
static inline float lz_first_of_magnitude(const float *x, float amax) {
    const __m256 sign = _mm256_set1_ps(-0.0f), va = _mm256_set1_ps(amax);
    for (int i = 0; i < 256; i += 8) {
        int hit = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + i)), va, _CMP_EQ_OQ));
        if (hit) {
            return x[i + __builtin_ctz(hit)];
        }
    }
    return 0;
}

/* 32 int32 quants (within int8) as bytes in order. */
static inline __attribute__((always_inline)) void lz_store_q32(int8_t *q, __m256i a, __m256i b, __m256i c, __m256i d) {
    __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(c, d));
    p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256((__m256i *) q, p);
}

static void lz_q8_0_block(const float *x, float *values, float *scale, int8_t *q) {
    float amax = lz_amax(x, 32);
    float id = amax != 0 ? 127.0f / amax : 0;
    if (amax < 0 || !isfinite(amax) || !isfinite(id)) {
        lz_q8_0_scalar(x, values, scale, q);
        return;
    }
    *scale = lz_round_f16(amax / 127.0f);
    __m256 vid = _mm256_set1_ps(id);
    __m256i qi[4];
    for (int k = 0; k < 4; k++) {
        __m256 r = _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(x + 8 * k), vid), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm256_storeu_ps(values + 8 * k, r);
        qi[k] = _mm256_cvtps_epi32(r);
    }
    lz_store_q32(q, qi[0], qi[1], qi[2], qi[3]);
}

static void lz_q8_k_block(const float *x, float *values, float *scale, int32_t *bsums, int8_t *q) {
    float amax = lz_amax(x, 256);
    if (!(amax > 0) || !isfinite(amax)) {
        lz_q8_k_scalar(x, values, scale, bsums, q);
        return;
    }
    float max = lz_first_of_magnitude(x, amax);
    float iscale = -127.0f / max;
    if (!isfinite(iscale)) {
        lz_q8_k_scalar(x, values, scale, bsums, q);
        return;
    }
    __m256 vs = _mm256_set1_ps(iscale);
    const __m256i cap = _mm256_set1_epi32(127);
    for (int g = 0; g < 8; g++) {
        __m256i qi[4];
        for (int k = 0; k < 4; k++) {
            const float *at = x + 32 * g + 8 * k;
            __m256 r = _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(at), vs), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            qi[k] = _mm256_min_epi32(_mm256_cvtps_epi32(r), cap);
            _mm256_storeu_ps(values + 32 * g + 8 * k, _mm256_cvtepi32_ps(qi[k]));
        }
        for (int h = 0; h < 2; h++) {
            __m256i s = _mm256_add_epi32(qi[2 * h], qi[2 * h + 1]);
            __m128i t = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
            t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0x4E));
            t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0xB1));
            bsums[2 * g + h] = _mm_cvtsi128_si32(t);
        }
        lz_store_q32(q + 32 * g, qi[0], qi[1], qi[2], qi[3]);
    }
    *scale = 1 / iscale;
}

#endif

/*
 * Converts x[0, n) as Q8_0 (type 0) or Q8_K (type 1): the quants as floats into values, the scales into scales, the
 * 16-value sums (Q8_K) into bsums, and quants, scales and sums into the lz_act at act.
 */
void LZ_QUANT_NAME(int32_t type, const float *x, int32_t n, int64_t act, float *values, float *scales, int32_t *bsums) {
    uint8_t *base = (uint8_t *) (intptr_t) act;
    int32_t cap = *(const int32_t *) base;
    int32_t block = type == 0 ? 32 : 256;
    int8_t *q = (int8_t *) (base + 64);
    float *nscales = (float *) (base + 64 + cap);
    int32_t *nbsums = (int32_t *) (base + 64 + cap + 4 * (cap / block));
    for (int32_t b = 0; b < n / block; b++) {
        if (type == 0) {
            lz_q8_0_block(x + 32 * b, values + 32 * b, scales + b, q + 32 * b);
        } else {
            lz_q8_k_block(x + 256 * b, values + 256 * b, scales + b, bsums + 16 * b, q + 256 * b);
            memcpy(nbsums + 16 * b, bsums + 16 * b, 64);
        }
        nscales[b] = scales[b];
    }
}
