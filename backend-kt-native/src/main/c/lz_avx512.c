/* The integer stages in AVX-512 with VNNI (F, BW, VL, VNNI): u8 x s8 four-product dots (vpdpbusd), int16 pairs
 * scaled into int32 lanes (vpdpwssd), two sub-blocks per 512-bit vector. Every integer is exact; the folds are
 * lz_driver.h's (8-lane ones: ggml folds its quantized dot products in 8 lanes on AVX-512 hosts too). */
#include <immintrin.h>
#include <stdint.h>

static inline __m256i lz_avx512_q8_0(const uint8_t *wq, const int8_t *y) {
    __m256i qw = _mm256_loadu_si256((const __m256i *) wq), qy = _mm256_loadu_si256((const __m256i *) y);
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_sign_epi8(qw, qw), _mm256_sign_epi8(qy, qw));
}

/* Sub-blocks 2p (lanes 0-7) and 2p + 1 (lanes 8-15) of a Q4_K block as 16 int32 lanes of scale (q . y). */
static inline __m512i lz_avx512_q4k_pair(const uint8_t *qs, const int8_t *y, const uint8_t sc[8], int p) {
    const __m256i low = _mm256_set1_epi8(0xF);
    __m256i b = _mm256_loadu_si256((const __m256i *) (qs + 32 * p));
    __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(b, low)),
                                   _mm256_and_si256(_mm256_srli_epi16(b, 4), low), 1);
    __m512i p16 = _mm512_maddubs_epi16(q, _mm512_loadu_si512(y + 64 * p));
    __m512i scales = _mm512_inserti64x4(_mm512_set1_epi16(sc[2 * p]), _mm256_set1_epi16(sc[2 * p + 1]), 1);
    return _mm512_madd_epi16(p16, scales);
}

/* Per pair of sub-blocks, or (perPair 0) the whole sum in pairs[0] and zeros: the integers are exact either way. */
static inline void lz_avx512_q4k(const uint8_t *qs, const int8_t *y, const uint8_t sc[8], int32_t pairs[4], int perPair) {
    if (perPair) {
        for (int p = 0; p < 4; p++) {
            pairs[p] = _mm512_reduce_add_epi32(lz_avx512_q4k_pair(qs, y, sc, p));
        }
        return;
    }
    __m512i s = _mm512_add_epi32(_mm512_add_epi32(lz_avx512_q4k_pair(qs, y, sc, 0), lz_avx512_q4k_pair(qs, y, sc, 1)),
                                 _mm512_add_epi32(lz_avx512_q4k_pair(qs, y, sc, 2), lz_avx512_q4k_pair(qs, y, sc, 3)));
    pairs[0] = _mm512_reduce_add_epi32(s);
    pairs[1] = pairs[2] = pairs[3] = 0;
}

static inline __m512i lz_avx512_q6_code(__m512i ql, __m512i qh, int odd) {
    const __m512i low = _mm512_set1_epi8(0xF), high = _mm512_set1_epi8(0x30);
    /* qh holds the half's qh bytes (lower 256 bits) and them shifted right by 2 (upper): groups 0 | 1 (odd = 0) take
     * the low nibbles and bits 0-1 | 2-3, groups 2 | 3 the high nibbles and bits 4-5 | 6-7 */
    __m512i nib = odd ? _mm512_and_si512(_mm512_srli_epi16(ql, 4), low) : _mm512_and_si512(ql, low);
    return _mm512_or_si512(nib, _mm512_and_si512(odd ? qh : _mm512_slli_epi16(qh, 4), high));
}

static inline __m256i lz_avx512_q6k(const uint8_t *blk, const int8_t *y) {
    const int8_t *sc = (const int8_t *) (blk + 192);
    __m512i lanes = _mm512_setzero_si512();
    for (int h = 0; h < 2; h++) {
        /* groups 0 and 1 read ql bytes 0-31 and 32-63 with qh shifted by 0 and 2; groups 2 and 3 likewise */
        __m512i ql = _mm512_loadu_si512(blk + 64 * h);
        __m256i qh256 = _mm256_loadu_si256((const __m256i *) (blk + 128 + 32 * h));
        __m512i qh = _mm512_inserti64x4(_mm512_castsi256_si512(qh256), _mm256_srli_epi16(qh256, 2), 1);
        for (int odd = 0; odd < 2; odd++) {
            __m512i code = lz_avx512_q6_code(ql, qh, odd);
            __m512i p16 = _mm512_maddubs_epi16(code, _mm512_loadu_si512(y + 128 * h + 64 * odd));
            int s = 8 * h + 4 * odd;
            /* int16 copies of scales s, s + 1 (lower 256 bits, 8 each) and s + 2, s + 3 (upper) */
            __m128i sc16 = _mm_loadu_si128((const __m128i *) sc);
            __m128i lo = _mm_shuffle_epi8(sc16, _mm_set_epi64x(0x0101010101010101LL * (s + 1), 0x0101010101010101LL * s));
            __m128i hi = _mm_shuffle_epi8(sc16, _mm_set_epi64x(0x0101010101010101LL * (s + 3), 0x0101010101010101LL * (s + 2)));
            __m512i scales = _mm512_cvtepi8_epi16(_mm256_set_m128i(hi, lo));
            lanes = _mm512_dpwssd_epi32(lanes, p16, scales);
        }
    }
    /* lanes 8-15 (the odd groups) onto lanes 0-7: exact */
    return _mm256_add_epi32(_mm512_castsi512_si256(lanes), _mm512_extracti64x4_epi64(lanes, 1));
}

#define LZ_Q8_0_LANES lz_avx512_q8_0
#define LZ_Q4K_PAIRS lz_avx512_q4k
#define LZ_Q6K_LANES lz_avx512_q6k
#define LZ_NAME lz_avx512_vnni_rows
#include "lz_driver.h"
