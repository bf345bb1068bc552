/*
 * Flash attention's value accumulation in ggml's one-row order (one_chunk with an F16 V): the accumulator is F16,
 * so every rescale (ggml_vec_scale_f16) and every added row (ggml_vec_mad_f16: fma, then rounded) rounds to F16.
 * V comes as the cache holds it, F16 bits, widened by vcvtph2ps.
 * vcvtps2ph/vcvtph2ps do that rounding in two instructions where the Vector API needs a dozen; the Java loop
 * (FlashAttentionKernel.madF16) is the reference and gives the same bits.
 */
#include <immintrin.h>
#include <math.h>
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

/*
 * glibc's expf (sysdeps/ieee754/flt-32/e_expf.c, the FMA build x86-64 selects on these hosts) in 8 double lanes, the
 * same operations in the same order: x·32/ln2 split into k + r by the 1.5·2^52 shift, r as one fma of the product
 * (where the compiler contracted it), 2^(k/32) from the table, the cubic in r by fmas, then rounded to float; below
 * -103.97 zero, below -103.28 the smallest subnormal (the underflow paths). Equal to glibc 2.36's expf for every
 * non-positive float (checked exhaustively; LibmTest compares a sample of them each build, which would show another
 * glibc's change); a vector with a positive or NaN lane takes the C library's expf, which covers the overflow paths.
 */
static const unsigned long long lz_exp2f_tab[32] __attribute__((aligned(64))) = {
    0x3ff0000000000000ULL, 0x3fefd9b0d3158574ULL, 0x3fefb5586cf9890fULL, 0x3fef9301d0125b51ULL,
    0x3fef72b83c7d517bULL, 0x3fef54873168b9aaULL, 0x3fef387a6e756238ULL, 0x3fef1e9df51fdee1ULL,
    0x3fef06fe0a31b715ULL, 0x3feef1a7373aa9cbULL, 0x3feedea64c123422ULL, 0x3feece086061892dULL,
    0x3feebfdad5362a27ULL, 0x3feeb42b569d4f82ULL, 0x3feeab07dd485429ULL, 0x3feea47eb03a5585ULL,
    0x3feea09e667f3bcdULL, 0x3fee9f75e8ec5f74ULL, 0x3feea11473eb0187ULL, 0x3feea589994cce13ULL,
    0x3feeace5422aa0dbULL, 0x3feeb737b0cdc5e5ULL, 0x3feec49182a3f090ULL, 0x3feed503b23e255dULL,
    0x3feee89f995ad3adULL, 0x3feeff76f2fb5e47ULL, 0x3fef199bdd85529cULL, 0x3fef3720dcef9069ULL,
    0x3fef5818dcfba487ULL, 0x3fef7c97337b9b5fULL, 0x3fefa4afa2a490daULL, 0x3fefd0765b6e4540ULL,
};

static inline __m256 lz_expf8(__m256 x) {
    const __m512d shift = _mm512_set1_pd(0x1.8p+52), invln2n = _mm512_set1_pd(0x1.71547652b82fep+0 * 32);
    const __m512d c0 = _mm512_set1_pd(0x1.c6af84b912394p-5 / 32 / 32 / 32);
    const __m512d c1 = _mm512_set1_pd(0x1.ebfce50fac4f3p-3 / 32 / 32);
    const __m512d c2 = _mm512_set1_pd(0x1.62e42ff0c52d6p-1 / 32);
    __m512d xd = _mm512_cvtps_pd(x);
    __m512d kd = _mm512_add_pd(_mm512_mul_pd(invln2n, xd), shift);
    __m512i ki = _mm512_castpd_si512(kd);
    kd = _mm512_sub_pd(kd, shift);
    __m512d r = _mm512_fmsub_pd(invln2n, xd, kd);
    __m512i lo = _mm512_permutex2var_epi64(_mm512_load_si512(lz_exp2f_tab), ki, _mm512_load_si512(lz_exp2f_tab + 8));
    __m512i hi = _mm512_permutex2var_epi64(_mm512_load_si512(lz_exp2f_tab + 16), ki,
                                           _mm512_load_si512(lz_exp2f_tab + 24));
    __m512i t = _mm512_mask_blend_epi64(_mm512_test_epi64_mask(ki, _mm512_set1_epi64(16)), lo, hi);
    __m512d s = _mm512_castsi512_pd(_mm512_add_epi64(t, _mm512_slli_epi64(ki, 47)));
    __m512d z = _mm512_fmadd_pd(c0, r, c1);
    __m512d r2 = _mm512_mul_pd(r, r);
    __m512d y = _mm512_fmadd_pd(c2, r, _mm512_set1_pd(1.0));
    y = _mm512_mul_pd(_mm512_fmadd_pd(z, r2, y), s);
    __m256 e = _mm512_cvtpd_ps(y);
    __m256 tiny = _mm256_blendv_ps(_mm256_setzero_ps(), _mm256_set1_ps(0x1p-149f),
                                   _mm256_cmp_ps(x, _mm256_set1_ps(-0x1.9fe368p6f), _CMP_GE_OQ));
    return _mm256_blendv_ps(e, tiny, _mm256_cmp_ps(x, _mm256_set1_ps(-0x1.9d1d9ep6f), _CMP_LT_OQ));
}

/* y[i] = expf(x[i]) for i in [0, n), as the C library's expf computes it (see lz_expf8). */
void lz_avx512_expf(const float *x, float *y, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        // positive or NaN lanes: not (v <= 0)
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_NLE_UQ)) != 0) {
            for (int j = i; j < i + 8; j++) {
                y[j] = expf(x[j]);
            }
        } else {
            _mm256_storeu_ps(y + i, lz_expf8(v));
        }
    }
    for (; i < n; i++) {
        y[i] = expf(x[i]);
    }
}

/*
 * Lane l of accumulator slots l, 16 + l, 32 + l, 48 + l (positions l, l + 16, l + 32, l + 48, then every 64th) for the
 * nv·16 outputs from column d, combined (0+2) + (1+3) into lanes[j][l].
 */
static inline __attribute__((always_inline)) void lz_value_slots(const float *p, int positions, const uint16_t *v,
        long v_stride, int d, int nv, int l, __m512 lanes[2][16]) {
    __m512 a[2], b[2], c[2], e[2];
    for (int j = 0; j < nv; j++) {
        a[j] = b[j] = c[j] = e[j] = _mm512_setzero_ps();
    }
#define LZ_ROW(t, j) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (v + (long) (t) * v_stride + d + 16 * (j))))
    int t = l;
    for (; t + 48 < positions; t += 64) {
        __m512 pa = _mm512_set1_ps(p[t]), pb = _mm512_set1_ps(p[t + 16]);
        __m512 pc = _mm512_set1_ps(p[t + 32]), pe = _mm512_set1_ps(p[t + 48]);
        for (int j = 0; j < nv; j++) {
            a[j] = _mm512_fmadd_ps(pa, LZ_ROW(t, j), a[j]);
            b[j] = _mm512_fmadd_ps(pb, LZ_ROW(t + 16, j), b[j]);
            c[j] = _mm512_fmadd_ps(pc, LZ_ROW(t + 32, j), c[j]);
            e[j] = _mm512_fmadd_ps(pe, LZ_ROW(t + 48, j), e[j]);
        }
    }
    for (int j = 0; j < nv; j++) {
        if (t < positions) {
            a[j] = _mm512_fmadd_ps(_mm512_set1_ps(p[t]), LZ_ROW(t, j), a[j]);
        }
        if (t + 16 < positions) {
            b[j] = _mm512_fmadd_ps(_mm512_set1_ps(p[t + 16]), LZ_ROW(t + 16, j), b[j]);
        }
        if (t + 32 < positions) {
            c[j] = _mm512_fmadd_ps(_mm512_set1_ps(p[t + 32]), LZ_ROW(t + 32, j), c[j]);
        }
        lanes[j][l] = _mm512_add_ps(_mm512_add_ps(a[j], c[j]), _mm512_add_ps(b[j], e[j]));
    }
#undef LZ_ROW
}

/*
 * out[d] = ggml_vec_dot_f16 of the probabilities p (F16-rounded floats) with column d of the F16 values, for d < v_dim
 * (a multiple of 16): position t in accumulator slot t mod 64 by fma, the slots combined (0+2) + (1+3) and summed as
 * _mm512_reduce_add_ps, lane by lane across 16 outputs at once. The Java loop (AttentionKernel.valueColumns) is the
 * reference.
 */
void lz_avx512_f16_value_dots(const float *p, int positions, const uint16_t *values, int v_off, int v_stride, int v_dim,
                              float *out) {
    const uint16_t *v = values + v_off;
    for (int d = 0; d < v_dim;) {
        int nv = v_dim - d >= 32 ? 2 : 1;
        __m512 lanes[2][16];
        for (int l = 0; l < 16; l++) {
            if (nv == 2) {
                lz_value_slots(p, positions, v, v_stride, d, 2, l, lanes);
            } else {
                lz_value_slots(p, positions, v, v_stride, d, 1, l, lanes);
            }
        }
        for (int j = 0; j < nv; j++) {
            __m512 *L = lanes[j];
            __m512 t0 = _mm512_add_ps(_mm512_add_ps(L[12], L[4]), _mm512_add_ps(L[8], L[0]));
            __m512 t1 = _mm512_add_ps(_mm512_add_ps(L[13], L[5]), _mm512_add_ps(L[9], L[1]));
            __m512 t2 = _mm512_add_ps(_mm512_add_ps(L[14], L[6]), _mm512_add_ps(L[10], L[2]));
            __m512 t3 = _mm512_add_ps(_mm512_add_ps(L[15], L[7]), _mm512_add_ps(L[11], L[3]));
            _mm512_storeu_ps(out + d + 16 * j, _mm512_add_ps(_mm512_add_ps(t0, t2), _mm512_add_ps(t1, t3)));
        }
        d += 16 * nv;
    }
}
