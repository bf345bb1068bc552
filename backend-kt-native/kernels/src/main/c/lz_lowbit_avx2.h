/*
 * The low-bit types' integer stages in AVX2 (included by lz_avx2.c): signed quants against the activation through
 * vpmaddubsw on |q| and y with q's sign, then vpmaddwd with the sub-block scales. Every integer is exact (|q·y| pairs
 * at most 2·127·127); the folds are lz_lowbit.h's.
 */
#include "lz_lowbit_codes.h"

/* halves[v][h] lane k = Σ over groups g of half h (g = 4h..4h + 3) of sc[2g + k / 4] · (q · y over values
 * 32g + 4k..+3): Java's VEC_DOT lanes, split by 128-value half for the repacked GEMM. */
static inline __attribute__((always_inline)) void lz_avx2_sb_halves(int type, const uint8_t *blk, const int8_t *sc,
        const int8_t *const *y, int nv, __m256i halves[][2]) {
    for (int v = 0; v < nv; v++) {
        halves[v][0] = halves[v][1] = _mm256_setzero_si256();
    }
    for (int g = 0; g < 8; g++) {
        __m256i code = lz_sb_codes(type, blk, g);
        __m256i scales = _mm256_cvtepi8_epi16(lz_lowbit_scale_pair(sc, 2 * g));
        /* Q2_K's quants are unsigned already */
        __m256i qa = type == LZ_SB_Q2K ? code : _mm256_abs_epi8(code);
        for (int v = 0; v < nv; v++) {
            __m256i yv = _mm256_loadu_si256((const __m256i *) (y[v] + 32 * g));
            if (type != LZ_SB_Q2K) {
                yv = _mm256_sign_epi8(yv, code);
            }
            halves[v][g >> 2] = _mm256_add_epi32(halves[v][g >> 2], _mm256_madd_epi16(_mm256_maddubs_epi16(qa, yv), scales));
        }
    }
}

/* lanes[v] lane k = q · y over values 4k..4k + 3 of the block. */
static inline __attribute__((always_inline)) void lz_avx2_tb_lanes(int type, const uint8_t *blk,
        const int8_t *const *y, int nv, __m256i *lanes) {
    __m256i code = lz_tb_codes(type, blk), qa = _mm256_abs_epi8(code);
    for (int v = 0; v < nv; v++) {
        __m256i yv = _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *) y[v]), code);
        lanes[v] = _mm256_madd_epi16(_mm256_maddubs_epi16(qa, yv), _mm256_set1_epi16(1));
    }
}

#define LZ_SB_HALVES lz_avx2_sb_halves
#define LZ_TB_LANES lz_avx2_tb_lanes
