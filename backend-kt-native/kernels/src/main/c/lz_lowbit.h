/*
 * The float folds of the low-bit types: Q2_K, Q3_K and IQ4_XS rows
 * against Q8_K (dev.lazarus.kt.quant.lowbit.SubBlockKQuantKernel) and IQ4_NL and MXFP4 rows against Q8_0
 * (TableBlockKernel), in the orders of those Java kernels, which are llama-server's. The ISA unit defines the exact
 * integers: LZ_SB_HALVES (a super-block's scaled lanes per 128-value half) and LZ_TB_LANES (a block's eight 4-value
 * lanes).
 */
#ifndef LZ_LOWBIT_H
#define LZ_LOWBIT_H
#include "lz_common.h"
#include "lz_kernels.h"
#include "lz_lowbit_codes.h"
#if !defined(LZ_SB_HALVES) || !defined(LZ_TB_LANES)
#error "the ISA unit defines LZ_SB_HALVES and LZ_TB_LANES first (lz_lowbit_avx2.h, lz_lowbit_avx512.h)"
#endif

/* The folds of SubBlockKQuantKernel.Order. */
enum { LZ_SB_VEC_DOT, LZ_SB_GEMV, LZ_SB_GEMM, LZ_SB_TILED };

static inline int32_t lz_lowbit_hsum_epi32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}

/* The sixteen scales (per 16 values; IQ4_XS's per 32 twice) and Q2_K's mins, as SubBlockQuants decodes them. */
static inline __attribute__((always_inline)) void lz_sb_scales(int type, const uint8_t *blk, int8_t sc[16],
                                                               int8_t m[16]) {
    if (type == LZ_SB_Q2K) {
        __m128i b = _mm_loadu_si128((const __m128i *) blk), low = _mm_set1_epi8(0xF);
        _mm_storeu_si128((__m128i *) sc, _mm_and_si128(b, low));
        _mm_storeu_si128((__m128i *) m, _mm_and_si128(_mm_srli_epi16(b, 4), low));
    } else if (type == LZ_SB_Q3K) {
        /* per 32-bit word, four scales at once: the low nibbles of bytes 0-7, then their high nibbles, each with its
         * two high bits from bytes 8-11 (bits 0-1 for scales 0-3, 2-3 for 4-7, 4-5 for 8-11, 6-7 for 12-15) */
        uint32_t w[3], out[4];
        memcpy(w, blk + 96, 12);
        const uint32_t nib = 0x0F0F0F0F, two = 0x03030303;
        out[0] = (w[0] & nib) | ((w[2] & two) << 4);
        out[1] = (w[1] & nib) | (((w[2] >> 2) & two) << 4);
        out[2] = ((w[0] >> 4) & nib) | (((w[2] >> 4) & two) << 4);
        out[3] = ((w[1] >> 4) & nib) | (((w[2] >> 6) & two) << 4);
        _mm_storeu_si128((__m128i *) sc, _mm_sub_epi8(_mm_loadu_si128((const __m128i *) out), _mm_set1_epi8(32)));
    } else {
        /* eight 6-bit scales per 32 values: nibble i of bytes 4-7, bits 2i..2i + 1 of the u16 at 2; each twice */
        uint32_t low, high = blk[2] | blk[3] << 8;
        memcpy(&low, blk + 4, 4);
        int8_t s8[16] = {0};
        for (int i = 0; i < 8; i++) {
            s8[i] = (int8_t) ((((low >> (4 * i)) & 0xF) | ((high >> (2 * i)) & 3) << 4) - 32);
        }
        __m128i v = _mm_loadu_si128((const __m128i *) s8);
        _mm_storeu_si128((__m128i *) sc, _mm_unpacklo_epi8(v, v));
    }
}

/* Q2_K's mins against the activation: lane k = m_2k bsum_2k + m_2k+1 bsum_2k+1 (vpmaddwd: a bsum of 16 int8 fits
 * int16); exact. */
static inline __m256i lz_q2k_mins(const int8_t *m, const int32_t *bs) {
    __m256i b16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(_mm256_loadu_si256((const __m256i *) bs),
            _mm256_loadu_si256((const __m256i *) (bs + 8))), 0xD8);
    return _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) m)), b16);
}

LZ_INLINE void lz_dot_sb(const uint8_t *row, const lz_act *a, int nv, int32_t cols, int type, int order, float *out) {
    int32_t bytes = type == LZ_SB_Q2K ? 84 : type == LZ_SB_Q3K ? 110 : 136;
    __m256 lanes[LZ_GROUP];
    float acc[LZ_GROUP], accMin[LZ_GROUP];
    for (int v = 0; v < nv; v++) {
        lanes[v] = _mm256_setzero_ps();
        acc[v] = accMin[v] = 0;
    }
    const int8_t *y[LZ_GROUP];
    __m256i halves[LZ_GROUP][2];
    for (int32_t b = 0; b < cols / 256; b++) {
        const uint8_t *blk = row + bytes * (int64_t) b;
        int8_t sc[16], m[16];
        lz_sb_scales(type, blk, sc, m);
        for (int v = 0; v < nv; v++) {
            y[v] = a[v].q + 256 * b;
        }
        LZ_SB_HALVES(type, blk, sc, y, nv, halves);
        float d = lz_f16(blk + (type == LZ_SB_Q2K ? 80 : type == LZ_SB_Q3K ? 108 : 0));
        float dmin = type == LZ_SB_Q2K ? lz_f16(blk + 82) : 0;
        for (int v = 0; v < nv; v++) {
            const int32_t *bs = a[v].bsums + 16 * b;
            float dy = a[v].scales[b];
            if (order == LZ_SB_VEC_DOT) {
                if (type == LZ_SB_Q2K) {
                    /* lane k first takes the mins of sub-blocks 2k, 2k + 1, as ggml's q2_K vec_dot does */
                    __m256 mv = _mm256_cvtepi32_ps(lz_q2k_mins(m, bs));
                    lanes[v] = _mm256_fmadd_ps(_mm256_set1_ps(-dy * dmin), mv, lanes[v]);
                }
                __m256 l = _mm256_cvtepi32_ps(_mm256_add_epi32(halves[v][0], halves[v][1]));
                lanes[v] = _mm256_fmadd_ps(_mm256_set1_ps(dy * d), l, lanes[v]);
            } else if (order == LZ_SB_TILED) {
                int32_t s1 = lz_lowbit_hsum_epi32(_mm256_add_epi32(halves[v][0], halves[v][1]));
                float x = d * (float) s1;
                if (type == LZ_SB_Q2K) {
                    x = __builtin_fmaf(-dmin, (float) lz_lowbit_hsum_epi32(lz_q2k_mins(m, bs)), x);
                }
                acc[v] = __builtin_fmaf(x, dy, acc[v]);
            } else {
                /* Q2_K repacked: GEMV folds once per super-block, GEMM once per 128 values (the mins' lanes 0-3 are
                 * sub-blocks 0-7, lanes 4-7 sub-blocks 8-15) */
                __m256i mins = lz_q2k_mins(m, bs);
                __m256i lowHalf = _mm256_permute2x128_si256(mins, mins, 0x80);
                __m256i highHalf = _mm256_permute2x128_si256(mins, mins, 0x81);
                int per = order == LZ_SB_GEMV ? 16 : 8;
                for (int s0 = 0; s0 < 16; s0 += per) {
                    int32_t isum = per == 16 ? lz_lowbit_hsum_epi32(_mm256_add_epi32(halves[v][0], halves[v][1]))
                                             : lz_lowbit_hsum_epi32(halves[v][s0 / 8]);
                    int32_t minSum = lz_lowbit_hsum_epi32(per == 16 ? mins : s0 == 0 ? lowHalf : highHalf);
                    acc[v] = __builtin_fmaf((float) isum, d * dy, acc[v]);
                    accMin[v] = __builtin_fmaf((float) minSum, dmin * dy, accMin[v]);
                }
            }
        }
    }
    for (int v = 0; v < nv; v++) {
        out[v] = order == LZ_SB_VEC_DOT ? lz_hsum8(lanes[v]) : order == LZ_SB_TILED ? acc[v] : acc[v] - accMin[v];
    }
}

/* MXFP4's E8M0 exponent halved (ggml's GGML_E8M0_TO_FP32_HALF: 2^(e - 128), subnormal for e < 2). */
static inline float lz_e8m0_half(uint8_t e) {
    uint32_t bits = e < 2 ? 0x00200000u << e : (uint32_t) (e - 1) << 23;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* TableBlockKernel: VEC_DOT (repacked = 0) or REPACKED. */
LZ_INLINE void lz_dot_tb(const uint8_t *row, const lz_act *a, int nv, int32_t cols, int type, int repacked, float *out) {
    int32_t bytes = type == LZ_TB_MXFP4 ? 17 : 18, blocks = cols / 32;
    /* VEC_DOT: even blocks into set 0, odd ones into set 1 */
    __m256 sets[LZ_GROUP][2];
    float acc[LZ_GROUP];
    for (int v = 0; v < nv; v++) {
        sets[v][0] = sets[v][1] = _mm256_setzero_ps();
        acc[v] = 0;
    }
    const int8_t *y[LZ_GROUP];
    __m256i lanes[LZ_GROUP];
    /* VEC_DOT takes blocks in pairs; an odd last one is folded on its own after the lanes' sum */
    int32_t paired = repacked ? blocks : blocks - blocks % 2;
    for (int32_t b = 0; b < blocks; b++) {
        const uint8_t *blk = row + bytes * (int64_t) b;
        for (int v = 0; v < nv; v++) {
            y[v] = a[v].q + 32 * b;
        }
        LZ_TB_LANES(type, blk, y, nv, lanes);
        float dw = type == LZ_TB_MXFP4 ? lz_e8m0_half(blk[0]) : lz_f16(blk);
        for (int v = 0; v < nv; v++) {
            float dy = a[v].scales[b];
            if (repacked) {
                acc[v] = __builtin_fmaf((float) lz_lowbit_hsum_epi32(lanes[v]), dw * dy, acc[v]);
            } else if (b < paired) {
                sets[v][b & 1] = _mm256_fmadd_ps(_mm256_set1_ps(dy * dw), _mm256_cvtepi32_ps(lanes[v]), sets[v][b & 1]);
            } else {
                float sum = lz_hsum8(_mm256_add_ps(sets[v][0], sets[v][1]));
                acc[v] = __builtin_fmaf(dy * dw, (float) lz_lowbit_hsum_epi32(lanes[v]), sum);
            }
        }
    }
    for (int v = 0; v < nv; v++) {
        out[v] = repacked || blocks % 2 == 1 ? acc[v] : lz_hsum8(_mm256_add_ps(sets[v][0], sets[v][1]));
    }
}

/* The low-bit kernels by id (lz_driver.h's enum), each specialised on its layout and order. */
LZ_INLINE void lz_dot_lowbit(int kernel, const uint8_t *row, const lz_act *a, int nv, int32_t cols, float *out) {
    switch (kernel) {
        case LZ_Q2K: lz_dot_sb(row, a, nv, cols, LZ_SB_Q2K, LZ_SB_VEC_DOT, out); break;
        case LZ_Q2K_GEMV: lz_dot_sb(row, a, nv, cols, LZ_SB_Q2K, LZ_SB_GEMV, out); break;
        case LZ_Q2K_GEMM: lz_dot_sb(row, a, nv, cols, LZ_SB_Q2K, LZ_SB_GEMM, out); break;
        case LZ_Q2K_TILED: lz_dot_sb(row, a, nv, cols, LZ_SB_Q2K, LZ_SB_TILED, out); break;
        case LZ_Q3K: lz_dot_sb(row, a, nv, cols, LZ_SB_Q3K, LZ_SB_VEC_DOT, out); break;
        case LZ_Q3K_TILED: lz_dot_sb(row, a, nv, cols, LZ_SB_Q3K, LZ_SB_TILED, out); break;
        case LZ_IQ4XS: lz_dot_sb(row, a, nv, cols, LZ_SB_IQ4XS, LZ_SB_VEC_DOT, out); break;
        case LZ_IQ4XS_TILED: lz_dot_sb(row, a, nv, cols, LZ_SB_IQ4XS, LZ_SB_TILED, out); break;
        case LZ_IQ4NL: lz_dot_tb(row, a, nv, cols, LZ_TB_IQ4NL, 0, out); break;
        case LZ_IQ4NL_REPACKED: lz_dot_tb(row, a, nv, cols, LZ_TB_IQ4NL, 1, out); break;
        case LZ_MXFP4: lz_dot_tb(row, a, nv, cols, LZ_TB_MXFP4, 0, out); break;
        default: lz_dot_tb(row, a, nv, cols, LZ_TB_MXFP4, 1, out); break;
    }
}

/* The activation's block: Q8_0's 32 for the table types, Q8_K's 256 for the others. */
static inline int32_t lz_lowbit_act_block(int kernel) {
    return kernel >= LZ_IQ4NL && kernel <= LZ_MXFP4_REPACKED ? 32 : 256;
}

#endif
