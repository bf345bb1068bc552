/* The integer stages in AVX-512 with VNNI (F, BW, VL, VNNI): u8 x s8 four-product dots (vpdpbusd), int16 pairs
 * scaled into int32 lanes (vpdpwssd), two sub-blocks per 512-bit vector. Every integer is exact; the folds are
 * lz_driver.h's (8-lane ones: ggml folds its quantized dot products in 8 lanes on AVX-512 hosts too). */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#define LZ_ALWAYS static inline __attribute__((always_inline))

LZ_ALWAYS void lz_avx512_q8_0(const uint8_t *wq, const int8_t *const *y, int nv, __m256i *lanes) {
    __m256i qw = _mm256_loadu_si256((const __m256i *) wq), aw = _mm256_sign_epi8(qw, qw);
    for (int v = 0; v < nv; v++) {
        __m256i qy = _mm256_loadu_si256((const __m256i *) y[v]);
        lanes[v] = _mm256_dpbusd_epi32(_mm256_setzero_si256(), aw, _mm256_sign_epi8(qy, qw));
    }
}

/* Per activation, per pair of sub-blocks (perPair) or the whole sum in pairs[v][0] and zeros: the integers are exact
 * either way. A pair p's quants as one vector: sub-block 2p (low nibbles, lanes of bytes 0-31) and 2p + 1 (high
 * nibbles, 32-63), against the activation's 64 values at 64p; scaled in int16 pairs into int32 lanes (vpmaddwd). */
LZ_ALWAYS void lz_avx512_q4k(const uint8_t *qs, const int8_t *const *y, int nv, const uint8_t sc[8],
                             int32_t pairs[][4], int perPair) {
    const __m256i low = _mm256_set1_epi8(0xF);
    __m512i total[4];
    for (int v = 0; v < nv; v++) {
        total[v] = _mm512_setzero_si512();
    }
    for (int p = 0; p < 4; p++) {
        __m256i b = _mm256_loadu_si256((const __m256i *) (qs + 32 * p));
        __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(b, low)),
                                       _mm256_and_si256(_mm256_srli_epi16(b, 4), low), 1);
        __m512i scales = _mm512_inserti64x4(_mm512_set1_epi16(sc[2 * p]), _mm256_set1_epi16(sc[2 * p + 1]), 1);
        for (int v = 0; v < nv; v++) {
            __m512i s = _mm512_madd_epi16(_mm512_maddubs_epi16(q, _mm512_loadu_si512(y[v] + 64 * p)), scales);
            if (perPair) {
                pairs[v][p] = _mm512_reduce_add_epi32(s);
            } else {
                total[v] = _mm512_add_epi32(total[v], s);
            }
        }
    }
    if (!perPair) {
        for (int v = 0; v < nv; v++) {
            pairs[v][0] = _mm512_reduce_add_epi32(total[v]);
            pairs[v][1] = pairs[v][2] = pairs[v][3] = 0;
        }
    }
}

static inline __m512i lz_avx512_q6_code(__m512i ql, __m512i qh, int odd) {
    const __m512i low = _mm512_set1_epi8(0xF), high = _mm512_set1_epi8(0x30);
    /* qh holds the half's qh bytes (lower 256 bits) and them shifted right by 2 (upper): groups 0 | 1 (odd = 0) take
     * the low nibbles and bits 0-1 | 2-3, groups 2 | 3 the high nibbles and bits 4-5 | 6-7 */
    __m512i nib = odd ? _mm512_and_si512(_mm512_srli_epi16(ql, 4), low) : _mm512_and_si512(ql, low);
    return _mm512_or_si512(nib, _mm512_and_si512(odd ? qh : _mm512_slli_epi16(qh, 4), high));
}

LZ_ALWAYS void lz_avx512_q6k(const uint8_t *blk, const int8_t *const *y, int nv, __m256i *out) {
    const int8_t *sc = (const int8_t *) (blk + 192);
    __m512i lanes[4];
    for (int v = 0; v < nv; v++) {
        lanes[v] = _mm512_setzero_si512();
    }
    for (int h = 0; h < 2; h++) {
        /* groups 0 and 1 read ql bytes 0-31 and 32-63 with qh shifted by 0 and 2; groups 2 and 3 likewise */
        __m512i ql = _mm512_loadu_si512(blk + 64 * h);
        __m256i qh256 = _mm256_loadu_si256((const __m256i *) (blk + 128 + 32 * h));
        __m512i qh = _mm512_inserti64x4(_mm512_castsi256_si512(qh256), _mm256_srli_epi16(qh256, 2), 1);
        for (int odd = 0; odd < 2; odd++) {
            __m512i code = lz_avx512_q6_code(ql, qh, odd);
            int s = 8 * h + 4 * odd;
            /* int16 copies of scales s, s + 1 (lower 256 bits, 8 each) and s + 2, s + 3 (upper) */
            __m128i sc16 = _mm_loadu_si128((const __m128i *) sc);
            __m128i lo = _mm_shuffle_epi8(sc16, _mm_set_epi64x(0x0101010101010101LL * (s + 1), 0x0101010101010101LL * s));
            __m128i hi = _mm_shuffle_epi8(sc16, _mm_set_epi64x(0x0101010101010101LL * (s + 3), 0x0101010101010101LL * (s + 2)));
            __m512i scales = _mm512_cvtepi8_epi16(_mm256_set_m128i(hi, lo));
            for (int v = 0; v < nv; v++) {
                __m512i p16 = _mm512_maddubs_epi16(code, _mm512_loadu_si512(y[v] + 128 * h + 64 * odd));
                lanes[v] = _mm512_dpwssd_epi32(lanes[v], p16, scales);
            }
        }
    }
    /* lanes 8-15 (the odd groups) onto lanes 0-7: exact */
    for (int v = 0; v < nv; v++) {
        out[v] = _mm256_add_epi32(_mm512_castsi512_si256(lanes[v]), _mm512_extracti64x4_epi64(lanes[v], 1));
    }
}

/* A 4-byte activation chunk broadcast to every row's lane. */
LZ_ALWAYS __m512i lz_avx512_bcast4(const int8_t *y) {
    int32_t v;
    memcpy(&v, y, 4);
    return _mm512_set1_epi32(v);
}

/* lz_q4k16.h's integers: per pair p, the 16 rows' 32-value dots of sub-blocks 2p (low nibbles) and 2p + 1 (high) by
 * vpdpbusd against the activation's four values broadcast, times the rows' scales (vpmulld); the mins by vpmaddwd of
 * the rows' two mins against the activation's two 32-value sums (each |sum| <= 32 * 128, an int16). */
LZ_ALWAYS void lz_avx512_q4k16(const uint8_t *blk, const int8_t *const *y, const int32_t *const *bs, int nv,
                               int perPair, int32_t sums[][4][16], int32_t mins[][4][16]) {
    const __m512i low = _mm512_set1_epi8(0xF);
    __m512i tot[4], totMin[4];
    _Pragma("GCC unroll 8")
    for (int v = 0; v < nv; v++) {
        tot[v] = totMin[v] = _mm512_setzero_si512();
    }
    _Pragma("GCC unroll 8")
    for (int p = 0; p < 4; p++) {
        __m512i lo[4], hi[4];
        _Pragma("GCC unroll 8")
        for (int v = 0; v < nv; v++) {
            lo[v] = hi[v] = _mm512_setzero_si512();
        }
        _Pragma("GCC unroll 8")
        for (int k = 0; k < 8; k++) {
            __m512i w = _mm512_loadu_si512(blk + 320 + 64 * (8 * p + k));
            __m512i wl = _mm512_and_si512(w, low), wh = _mm512_and_si512(_mm512_srli_epi16(w, 4), low);
            _Pragma("GCC unroll 8")
            for (int v = 0; v < nv; v++) {
                lo[v] = _mm512_dpbusd_epi32(lo[v], wl, lz_avx512_bcast4(y[v] + 64 * p + 4 * k));
                hi[v] = _mm512_dpbusd_epi32(hi[v], wh, lz_avx512_bcast4(y[v] + 64 * p + 32 + 4 * k));
            }
        }
        __m512i scl = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *) (blk + 64 + 32 * p)));
        __m512i sch = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *) (blk + 64 + 32 * p + 16)));
        __m512i mn = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *) (blk + 192 + 32 * p)));
        _Pragma("GCC unroll 8")
        for (int v = 0; v < nv; v++) {
            __m512i s = _mm512_add_epi32(_mm512_mullo_epi32(lo[v], scl), _mm512_mullo_epi32(hi[v], sch));
            int32_t b0 = bs[v][4 * p] + bs[v][4 * p + 1], b1 = bs[v][4 * p + 2] + bs[v][4 * p + 3];
            __m512i m = _mm512_madd_epi16(mn, _mm512_set1_epi32((int32_t) (((uint32_t) b0 & 0xFFFF) | ((uint32_t) b1 << 16))));
            if (perPair) {
                _mm512_storeu_si512(sums[v][p], s);
                _mm512_storeu_si512(mins[v][p], m);
            } else {
                tot[v] = _mm512_add_epi32(tot[v], s);
                totMin[v] = _mm512_add_epi32(totMin[v], m);
            }
        }
    }
    if (!perPair) {
        _Pragma("GCC unroll 8")
        for (int v = 0; v < nv; v++) {
            _mm512_storeu_si512(sums[v][0], tot[v]);
            _mm512_storeu_si512(mins[v][0], totMin[v]);
        }
    }
}

#define LZ_Q8_0_LANES lz_avx512_q8_0
#define LZ_Q4K_PAIRS lz_avx512_q4k
#define LZ_Q6K_LANES lz_avx512_q6k
#define LZ_Q4K16_INTS lz_avx512_q4k16
#define LZ_NAME lz_avx512_vnni_rows
#include "lz_lowbit_avx512.h"
#include "lz_driver.h"
#define LZ_QUANT_NAME lz_avx512_vnni_quantize
#include "lz_quant.h"
