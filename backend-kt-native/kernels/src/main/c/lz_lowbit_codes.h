/*
 * The low-bit types' quants as signed bytes, for both ISA units' integer stages (lz_lowbit_avx2.h,
 * lz_lowbit_avx512.h): a 32-value group of a Q2_K / Q3_K / IQ4_XS super-block (dev.lazarus.kt.gguf.SubBlockQuants)
 * or an IQ4_NL / MXFP4 block (TableQuants), value j of the group in byte j. Unpacking only: no rounding anywhere.
 */
#ifndef LZ_LOWBIT_CODES_H
#define LZ_LOWBIT_CODES_H
#include <immintrin.h>
#include <stdint.h>

/* The super-block layouts, and the table ones (which share IQ4_XS's nibble order within a block). */
/* LZ_SB_GRID: a grid I-quant's 256 values already unpacked into signed bytes (lz_grid.h). */
enum { LZ_SB_Q2K, LZ_SB_Q3K, LZ_SB_IQ4XS, LZ_SB_GRID };
enum { LZ_TB_IQ4NL, LZ_TB_MXFP4 };

/* ggml's kvalues_iq4nl and kvalues_mxfp4 (E2M1 doubled), in both 128-bit halves for vpshufb. */
static inline __m256i lz_lowbit_table(int mxfp4) {
    return mxfp4 ? _mm256_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12,
                                    0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12)
                 : _mm256_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
                                    -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
}

/* 16 bytes of index nibbles: the low nibbles are values 0-15, the high ones 16-31, looked up in the table. */
static inline __m256i lz_lowbit_nibbles(const uint8_t *qs, __m256i table) {
    __m128i q = _mm_loadu_si128((const __m128i *) qs), low = _mm_set1_epi8(0xF);
    __m256i idx = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), low), _mm_and_si128(q, low));
    return _mm256_shuffle_epi8(table, idx);
}

/* Group g (values 32g..32g + 31) of the super-block at blk: Q2_K 0..3, Q3_K -4..3, IQ4_XS -127..113. */
static inline __attribute__((always_inline)) __m256i lz_sb_codes(int type, const uint8_t *blk, int g) {
    if (type == LZ_SB_GRID) {
        return _mm256_loadu_si256((const __m256i *) (blk + 32 * g));
    }
    if (type == LZ_SB_IQ4XS) {
        return lz_lowbit_nibbles(blk + 8 + 16 * g, lz_lowbit_table(0));
    }
    /* bits 2s..2s + 1 of qs[32h + l] for value 128h + 32s + l */
    int h = g >> 2, s = g & 3;
    const __m256i three = _mm256_set1_epi8(3);
    __m256i qs = _mm256_loadu_si256((const __m256i *) (blk + (type == LZ_SB_Q2K ? 16 : 32) + 32 * h));
    __m256i low = _mm256_and_si256(_mm256_srli_epi16(qs, 2 * s), three);
    if (type == LZ_SB_Q2K) {
        return low;
    }
    /* Q3_K: bit 4h + s of hmask[l] clear means 4 less */
    __m256i hm = _mm256_loadu_si256((const __m256i *) blk);
    __m256i clear = _mm256_cmpeq_epi8(_mm256_and_si256(hm, _mm256_set1_epi8((char) (1 << (4 * h + s)))),
                                      _mm256_setzero_si256());
    return _mm256_sub_epi8(low, _mm256_and_si256(clear, _mm256_set1_epi8(4)));
}

/* The 32 values of an IQ4_NL (f16 d at 0) or MXFP4 (E8M0 at 0) block. */
static inline __attribute__((always_inline)) __m256i lz_tb_codes(int type, const uint8_t *blk) {
    return lz_lowbit_nibbles(blk + (type == LZ_TB_MXFP4 ? 1 : 2), lz_lowbit_table(type == LZ_TB_MXFP4));
}

/* int16 copies of scales s (bytes 0-7 of the result) and s + 1 (8-15) from the 16 at sc. */
static inline __m128i lz_lowbit_scale_pair(const int8_t *sc, int s) {
    return _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *) sc),
                            _mm_set_epi64x(0x0101010101010101LL * (s + 1), 0x0101010101010101LL * s));
}

#endif
