/*
 * Flash attention's value accumulation in ggml's one-row order (one_chunk with an F16 V): the accumulator is F16,
 * so every rescale (ggml_vec_scale_f16) and every added row (ggml_vec_mad_f16: fma, then rounded) rounds to F16.
 * vcvtps2ph/vcvtph2ps do that rounding in two instructions where the Vector API needs a dozen; the Java loop
 * (FlashAttentionKernel.madF16) is the reference and gives the same bits.
 */
#include <immintrin.h>

static inline __m512 lz_round_f16(__m512 x) {
    return _mm512_cvtph_ps(_mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

/*
 * For k < count: acc = f16(acc * rescale[k]) where rescale[k] != 1, then
 * acc[d] = f16(fma(v[kept[k] * v_stride + v_off + d], weight[k], acc[d])) for d < n.
 */
void lz_avx512_flash_mad_f16(float *acc, const float *v, int v_off, int v_stride, int n, const int *kept,
                             const float *rescale, const float *weight, int count) {
    for (int d = 0; d < n; d += 16) {
        __mmask16 m = n - d >= 16 ? (__mmask16) 0xFFFF : (__mmask16) ((1u << (n - d)) - 1);
        __m512 a = _mm512_maskz_loadu_ps(m, acc + d);
        for (int k = 0; k < count; k++) {
            if (rescale[k] != 1.0f) {
                a = lz_round_f16(_mm512_mul_ps(a, _mm512_set1_ps(rescale[k])));
            }
            const float *row = v + (long) kept[k] * v_stride + v_off + d;
            a = lz_round_f16(_mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, row), _mm512_set1_ps(weight[k]), a));
        }
        _mm512_mask_storeu_ps(acc + d, m, a);
    }
}
