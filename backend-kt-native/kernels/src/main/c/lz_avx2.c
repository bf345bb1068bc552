/* The integer stages in AVX2 (any x86-64 host with AVX2, FMA and F16C): u8 x s8 pair products (vpmaddubsw), then
 * int16 pairs into int32 lanes (vpmaddwd). Every integer is exact; the folds are lz_driver.h's. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

/* Eight int32 lanes of a Q8_0 block per activation: lane k = sum of products of values 4k..4k+3 (signs moved onto y
 * for vpmaddubsw; the activation never holds -128). */
static inline __attribute__((always_inline)) void lz_avx2_q8_0(const uint8_t *wq, const int8_t *const *y, int nv,
                                                               __m256i *lanes) {
    __m256i qw = _mm256_loadu_si256((const __m256i *) wq), aw = _mm256_sign_epi8(qw, qw);
    for (int v = 0; v < nv; v++) {
        __m256i qy = _mm256_loadu_si256((const __m256i *) y[v]);
        lanes[v] = _mm256_madd_epi16(_mm256_maddubs_epi16(aw, _mm256_sign_epi8(qy, qw)), _mm256_set1_epi16(1));
    }
}

static inline int32_t lz_avx2_hsum(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}

/* pairs[p] (perPair) = sum over sub-blocks 2p, 2p + 1 of scale_j (q . y)_j: the low nibbles of quant bytes 32p.. are
 * sub-block 2p, their high nibbles 2p + 1. */
static inline __attribute__((always_inline)) void lz_avx2_q4k(const uint8_t *qs, const int8_t *const *y, int nv,
        const uint8_t sc[8], int32_t pairs[][4], int perPair) {
    const __m256i low = _mm256_set1_epi8(0xF);
    __m256i total[4];
    for (int v = 0; v < nv; v++) {
        total[v] = _mm256_setzero_si256();
    }
    for (int p = 0; p < 4; p++) {
        __m256i b = _mm256_loadu_si256((const __m256i *) (qs + 32 * p));
        __m256i bl = _mm256_and_si256(b, low), bh = _mm256_and_si256(_mm256_srli_epi16(b, 4), low);
        __m256i sl = _mm256_set1_epi16(sc[2 * p]), sh = _mm256_set1_epi16(sc[2 * p + 1]);
        for (int v = 0; v < nv; v++) {
            __m256i lo = _mm256_maddubs_epi16(bl, _mm256_loadu_si256((const __m256i *) (y[v] + 64 * p)));
            __m256i hi = _mm256_maddubs_epi16(bh, _mm256_loadu_si256((const __m256i *) (y[v] + 64 * p + 32)));
            __m256i s = _mm256_add_epi32(_mm256_madd_epi16(lo, sl), _mm256_madd_epi16(hi, sh));
            if (perPair) {
                pairs[v][p] = lz_avx2_hsum(s);
            } else {
                total[v] = _mm256_add_epi32(total[v], s);
            }
        }
    }
    if (!perPair) {
        /* the whole sum in pairs[v][0]: the integers are exact either way */
        for (int v = 0; v < nv; v++) {
            pairs[v][0] = lz_avx2_hsum(total[v]);
            pairs[v][1] = pairs[v][2] = pairs[v][3] = 0;
        }
    }
}

/* Sixteen int16 copies of scales s (8) and s + 1 (8), from the 16 scale bytes at sc. */
static inline __m256i lz_avx2_scale_pairs(const int8_t *sc, int s) {
    __m128i pick = _mm_set_epi64x(0x0101010101010101LL * (s + 1), 0x0101010101010101LL * s);
    return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(_mm_loadu_si128((const __m128i *) sc), pick));
}

/* The 6-bit code of group g (0..3) of a half super-block from its ql and qh vectors. */
static inline __m256i lz_avx2_q6_code(__m256i ql0, __m256i ql1, __m256i qh, int g) {
    const __m256i low = _mm256_set1_epi8(0xF), high = _mm256_set1_epi8(0x30);
    switch (g) {
        case 0: return _mm256_or_si256(_mm256_and_si256(ql0, low), _mm256_and_si256(_mm256_slli_epi16(qh, 4), high));
        case 1: return _mm256_or_si256(_mm256_and_si256(ql1, low), _mm256_and_si256(_mm256_slli_epi16(qh, 2), high));
        case 2: return _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low), _mm256_and_si256(qh, high));
        default: return _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low),
                                        _mm256_and_si256(_mm256_srli_epi16(qh, 2), high));
    }
}

/* Lane k = sum over the eight 32-value groups of scale (code . y) over values 4k..4k+3 (the -32 is the driver's). */
static inline __attribute__((always_inline)) void lz_avx2_q6k(const uint8_t *blk, const int8_t *const *y, int nv,
                                                              __m256i *lanes) {
    const int8_t *sc = (const int8_t *) (blk + 192);
    for (int v = 0; v < nv; v++) {
        lanes[v] = _mm256_setzero_si256();
    }
    for (int h = 0; h < 2; h++) {
        __m256i ql0 = _mm256_loadu_si256((const __m256i *) (blk + 64 * h));
        __m256i ql1 = _mm256_loadu_si256((const __m256i *) (blk + 64 * h + 32));
        __m256i qh = _mm256_loadu_si256((const __m256i *) (blk + 128 + 32 * h));
        for (int g = 0; g < 4; g++) {
            __m256i code = lz_avx2_q6_code(ql0, ql1, qh, g), scales = lz_avx2_scale_pairs(sc, 8 * h + 2 * g);
            for (int v = 0; v < nv; v++) {
                __m256i p16 = _mm256_maddubs_epi16(code, _mm256_loadu_si256((const __m256i *) (y[v] + 128 * h + 32 * g)));
                lanes[v] = _mm256_add_epi32(lanes[v], _mm256_madd_epi16(p16, scales));
            }
        }
    }
}

/* A 4-byte activation chunk broadcast to every row's lane. */
static inline __attribute__((always_inline)) __m256i lz_avx2_bcast4(const int8_t *y) {
    int32_t v;
    memcpy(&v, y, 4);
    return _mm256_set1_epi32(v);
}

/* The rows' scales of sub-block j, half h (rows 8h..8h + 7), as (sc, sc) int16 pairs per lane. */
static inline __m256i lz_avx2_q4k16_scales(const uint8_t *blk, int j, int h) {
    __m256i s = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *) (blk + 64 + 16 * j + 8 * h)));
    return _mm256_or_si256(s, _mm256_slli_epi32(s, 16));
}

/* lz_q4k16.h's integers in two halves of eight rows: vpmaddubsw of the nibbles against the activation's four values
 * broadcast, summed over a sub-block's eight chunks in int16 (|sum| <= 8 * 2 * 15 * 128 = 30720), then vpmaddwd by
 * the rows' scale; the mins by vpmaddwd as in the AVX-512 unit. */
static inline __attribute__((always_inline)) void lz_avx2_q4k16(const uint8_t *blk, const int8_t *const *y,
        const int32_t *const *bs, int nv, int perPair, int32_t sums[][4][16], int32_t mins[][4][16]) {
    const __m256i low = _mm256_set1_epi8(0xF);
    _Pragma("GCC unroll 8")
    for (int h = 0; h < 2; h++) {
        __m256i tot[4], totMin[4];
        _Pragma("GCC unroll 8")
        for (int v = 0; v < nv; v++) {
            tot[v] = totMin[v] = _mm256_setzero_si256();
        }
        _Pragma("GCC unroll 8")
        for (int p = 0; p < 4; p++) {
            __m256i lo[4], hi[4];
            _Pragma("GCC unroll 8")
            for (int v = 0; v < nv; v++) {
                lo[v] = hi[v] = _mm256_setzero_si256();
            }
            _Pragma("GCC unroll 8")
            for (int k = 0; k < 8; k++) {
                __m256i w = _mm256_loadu_si256((const __m256i *) (blk + 320 + 64 * (8 * p + k) + 32 * h));
                __m256i wl = _mm256_and_si256(w, low), wh = _mm256_and_si256(_mm256_srli_epi16(w, 4), low);
                _Pragma("GCC unroll 8")
                for (int v = 0; v < nv; v++) {
                    lo[v] = _mm256_add_epi16(lo[v], _mm256_maddubs_epi16(wl, lz_avx2_bcast4(y[v] + 64 * p + 4 * k)));
                    hi[v] = _mm256_add_epi16(hi[v], _mm256_maddubs_epi16(wh, lz_avx2_bcast4(y[v] + 64 * p + 32 + 4 * k)));
                }
            }
            __m256i scl = lz_avx2_q4k16_scales(blk, 2 * p, h), sch = lz_avx2_q4k16_scales(blk, 2 * p + 1, h);
            __m256i mn = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *) (blk + 192 + 32 * p + 16 * h)));
            _Pragma("GCC unroll 8")
            for (int v = 0; v < nv; v++) {
                __m256i s = _mm256_add_epi32(_mm256_madd_epi16(lo[v], scl), _mm256_madd_epi16(hi[v], sch));
                int32_t b0 = bs[v][4 * p] + bs[v][4 * p + 1], b1 = bs[v][4 * p + 2] + bs[v][4 * p + 3];
                __m256i m = _mm256_madd_epi16(mn, _mm256_set1_epi32((int32_t) (((uint32_t) b0 & 0xFFFF) | ((uint32_t) b1 << 16))));
                if (perPair) {
                    _mm256_storeu_si256((__m256i *) (sums[v][p] + 8 * h), s);
                    _mm256_storeu_si256((__m256i *) (mins[v][p] + 8 * h), m);
                } else {
                    tot[v] = _mm256_add_epi32(tot[v], s);
                    totMin[v] = _mm256_add_epi32(totMin[v], m);
                }
            }
        }
        if (!perPair) {
            _Pragma("GCC unroll 8")
            for (int v = 0; v < nv; v++) {
                _mm256_storeu_si256((__m256i *) (sums[v][0] + 8 * h), tot[v]);
                _mm256_storeu_si256((__m256i *) (mins[v][0] + 8 * h), totMin[v]);
            }
        }
    }
}

#define LZ_Q8_0_LANES lz_avx2_q8_0
#define LZ_Q4K_PAIRS lz_avx2_q4k
#define LZ_Q6K_LANES lz_avx2_q6k
#define LZ_Q4K16_INTS lz_avx2_q4k16
#define LZ_NAME lz_avx2_rows
#include "lz_lowbit_avx2.h"
#include "lz_driver.h"
#define LZ_QUANT_NAME lz_avx2_quantize
#include "lz_quant.h"
