/*
 * The low-bit types' integer stages in AVX-512 VNNI (included by lz_avx512.c): two 32-value groups per 512-bit
 * vector, |q| against y with q's sign (vpmaddubsw), scaled into int32 lanes (vpdpwssd); table blocks by vpdpbusd.
 * Every integer is exact and equals lz_lowbit_avx2.h's; the folds are lz_lowbit.h's.
 */
#include "lz_lowbit_codes.h"

static inline __attribute__((always_inline)) void lz_avx512_sb_halves(int type, const uint8_t *blk, const int8_t *sc,
        const int8_t *const *y, int nv, __m256i halves[][2]) {
    __m512i acc[4][2];
    for (int v = 0; v < nv; v++) {
        acc[v][0] = acc[v][1] = _mm512_setzero_si512();
    }
    for (int g = 0; g < 8; g += 2) {
        __m512i code = _mm512_inserti64x4(_mm512_castsi256_si512(lz_sb_codes(type, blk, g)), lz_sb_codes(type, blk, g + 1), 1);
        /* int16 scales 2g, 2g + 1 (lower 256 bits, 8 each) and 2g + 2, 2g + 3 (upper) */
        __m512i scales = _mm512_cvtepi8_epi16(_mm256_set_m128i(lz_lowbit_scale_pair(sc, 2 * g + 2),
                                                               lz_lowbit_scale_pair(sc, 2 * g)));
        __m512i qa = type == LZ_SB_Q2K ? code : _mm512_abs_epi8(code);
        /* no vpsignb at 512 bits: y negated where q < 0 (where q = 0 the product is 0 either way) */
        __mmask64 neg = type == LZ_SB_Q2K ? 0 : _mm512_movepi8_mask(code);
        for (int v = 0; v < nv; v++) {
            __m512i yv = _mm512_loadu_si512(y[v] + 32 * g);
            yv = _mm512_mask_sub_epi8(yv, neg, _mm512_setzero_si512(), yv);
            acc[v][g >> 2] = _mm512_dpwssd_epi32(acc[v][g >> 2], _mm512_maddubs_epi16(qa, yv), scales);
        }
    }
    /* group g + 1's lanes (upper 256 bits) onto group g's: exact */
    for (int v = 0; v < nv; v++) {
        for (int h = 0; h < 2; h++) {
            halves[v][h] = _mm256_add_epi32(_mm512_castsi512_si256(acc[v][h]), _mm512_extracti64x4_epi64(acc[v][h], 1));
        }
    }
}

static inline __attribute__((always_inline)) void lz_avx512_tb_lanes(int type, const uint8_t *blk,
        const int8_t *const *y, int nv, __m256i *lanes) {
    __m256i code = lz_tb_codes(type, blk), qa = _mm256_abs_epi8(code);
    for (int v = 0; v < nv; v++) {
        __m256i yv = _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *) y[v]), code);
        lanes[v] = _mm256_dpbusd_epi32(_mm256_setzero_si256(), qa, yv);
    }
}

#define LZ_SB_HALVES lz_avx512_sb_halves
#define LZ_TB_LANES lz_avx512_tb_lanes
