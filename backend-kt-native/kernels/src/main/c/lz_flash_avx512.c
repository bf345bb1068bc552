/*
 * Flash attention's value accumulation in ggml's one-row order (one_chunk with an F16 V): the accumulator is F16,
 * so every rescale (ggml_vec_scale_f16) and every added row (ggml_vec_mad_f16: fma, then rounded) rounds to F16.
 * V comes as the cache holds it, F16 bits, widened by vcvtph2ps.
 * vcvtps2ph/vcvtph2ps do that rounding in two instructions where the Vector API needs a dozen; the Java loop
 * (FlashAttentionKernel.madF16) is the reference and gives the same bits.
 */
#include <immintrin.h>
#include <stdint.h>

static inline __m512 lz_round_f16(__m512 x) {
    return _mm512_cvtph_ps(_mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

/*
 * Vectors [0, nv) of 16 lanes at acc + d across all positions, their accumulators in registers: nv independent
 * rounding chains per position, so the conversions' latency overlaps (one chain at a time waits on it).
 */
static inline __attribute__((always_inline)) void lz_mad_block(float *acc, const uint16_t *v, int v_off, int v_stride,
        int n, int d, int nv, const int *kept, const float *rescale, const float *weight, int count) {
    __m512 a[8];
    __mmask16 m[8];
    for (int j = 0; j < nv; j++) {
        int left = n - d - 16 * j;
        m[j] = left >= 16 ? (__mmask16) 0xFFFF : (__mmask16) ((1u << left) - 1);
        a[j] = _mm512_maskz_loadu_ps(m[j], acc + d + 16 * j);
    }
    for (int k = 0; k < count; k++) {
        if (rescale[k] != 1.0f) {
            __m512 r = _mm512_set1_ps(rescale[k]);
            for (int j = 0; j < nv; j++) {
                a[j] = lz_round_f16(_mm512_mul_ps(a[j], r));
            }
        }
        const uint16_t *row = v + (long) kept[k] * v_stride + v_off + d;
        __m512 w = _mm512_set1_ps(weight[k]);
        for (int j = 0; j < nv; j++) {
            __m512 x = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m[j], row + 16 * j));
            a[j] = lz_round_f16(_mm512_fmadd_ps(x, w, a[j]));
        }
    }
    for (int j = 0; j < nv; j++) {
        _mm512_mask_storeu_ps(acc + d + 16 * j, m[j], a[j]);
    }
}

/*
 * For k < count: acc = f16(acc * rescale[k]) where rescale[k] != 1, then
 * acc[d] = f16(fma(v[kept[k] * v_stride + v_off + d], weight[k], acc[d])) for d < n; in blocks of up to 8 vectors.
 */
void lz_avx512_flash_mad_f16h(float *acc, const uint16_t *v, int v_off, int v_stride, int n, const int *kept,
                              const float *rescale, const float *weight, int count) {
    for (int d = 0; d < n; d += 128) {
        int nv = (n - d + 15) / 16;
        switch (nv > 8 ? 8 : nv) {
        case 1: lz_mad_block(acc, v, v_off, v_stride, n, d, 1, kept, rescale, weight, count); break;
        case 2: lz_mad_block(acc, v, v_off, v_stride, n, d, 2, kept, rescale, weight, count); break;
        case 3: lz_mad_block(acc, v, v_off, v_stride, n, d, 3, kept, rescale, weight, count); break;
        case 4: lz_mad_block(acc, v, v_off, v_stride, n, d, 4, kept, rescale, weight, count); break;
        case 5: lz_mad_block(acc, v, v_off, v_stride, n, d, 5, kept, rescale, weight, count); break;
        case 6: lz_mad_block(acc, v, v_off, v_stride, n, d, 6, kept, rescale, weight, count); break;
        case 7: lz_mad_block(acc, v, v_off, v_stride, n, d, 7, kept, rescale, weight, count); break;
        default: lz_mad_block(acc, v, v_off, v_stride, n, d, 8, kept, rescale, weight, count); break;
        }
    }
}

/*
 * ggml_vec_dot_f16 of the query (F16-rounded, as floats) with the F16 keys of positions [from, to), for a dimension
 * that is a multiple of 64: four 16-lane fma accumulators over 64-value steps, combined (0+2) + (1+3), then the 16
 * lanes summed as GCC expands _mm512_reduce_add_ps (GgmlSums.reduce16): the upper half onto the lower, the upper
 * quarter onto that, then (0+2) + (1+3). The Java loop (AttentionKernel.keyDots) is the reference.
 */
void lz_avx512_f16_key_dots(const float *q, int dim, const uint16_t *keys, int k_off, int k_stride, int from, int to,
                            float *scores) {
    for (int t = from; t < to; t++) {
        const uint16_t *k = keys + (long) t * k_stride + k_off;
        __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
        for (int i = 0; i < dim; i += 64) {
            s0 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i), _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (k + i))), s0);
            s1 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i + 16),
                                 _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (k + i + 16))), s1);
            s2 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i + 32),
                                 _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (k + i + 32))), s2);
            s3 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i + 48),
                                 _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (k + i + 48))), s3);
        }
        __m512 v = _mm512_add_ps(_mm512_add_ps(s0, s2), _mm512_add_ps(s1, s3));
        __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v),
                                 _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
        __m128 f = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
        __m128 p = _mm_add_ps(f, _mm_movehl_ps(f, f));
        scores[t] = _mm_cvtss_f32(_mm_add_ss(p, _mm_shuffle_ps(p, p, 1)));
    }
}
