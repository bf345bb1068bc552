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
