/*
 * Q4_K in the native RAM-tier layout (dev.lazarus.kt.quant.q4k.Q4KNativePacked): rows in groups of 16, the 16 rows'
 * super-block b side by side in LZ_Q4K16_BLOCK bytes, so that one pass over 256 activation values serves 16 rows
 * with one 32-bit lane per row, and the scales and mins are unpacked once at load instead of per product:
 *
 *   0    16 f16 d (row r at 2r)          32   16 f16 dmin
 *   64   8 x 16 u8 scales (sub-block j, row r at 16j + r)
 *   192  4 x 16 x 2 u8 mins (pair p, row r: mins of sub-blocks 2p and 2p + 1 at 32p + 2r, + 1)
 *   320  32 x 64 quant bytes: chunk 8p + k holds, row r at 4r, ggml's quant bytes 32p + 4k .. + 3 of the row
 *        (low nibbles: values 4k .. of sub-block 2p, high nibbles: of sub-block 2p + 1)
 *
 * Each ISA unit defines LZ_Q4K16_INTS: the exact integers of a block per row, per activation, into int32[16] arrays:
 * per pair of sub-blocks (perPair: sums[v][p] = sum over j in {2p, 2p + 1} of sc_j (q . y)_j, mins[v][p] =
 * mn_2p (bsum 2p) + mn_2p+1 (bsum 2p + 1)) or their totals in [v][0]. The folds below are lz_dot_q4k's, one float
 * lane per row (two 8-lane halves, so that both units share them), in the reference orders.
 */
#ifndef LZ_Q4K16_H
#define LZ_Q4K16_H
#include "lz_common.h"
#include "lz_kernels.h"
#if !defined(LZ_Q4K16_INTS)
#error "the ISA unit defines LZ_Q4K16_INTS first (lz_avx2.c, lz_avx512.c)"
#endif

#define LZ_Q4K16_ROWS 16
#define LZ_Q4K16_BLOCK 2368
#define LZ_Q4K16_D 0
#define LZ_Q4K16_DMIN 32
#define LZ_Q4K16_SC 64
#define LZ_Q4K16_MN 192
#define LZ_Q4K16_Q 320

typedef int32_t lz_lanes16[4][LZ_Q4K16_ROWS];

/* Rows [16 g, 16 g + 16) against nv (1..LZ_GROUP) activations: out[v][r]. */
LZ_INLINE void lz_q4k16_group(const uint8_t *group, const lz_act *a, int nv, int32_t blocks, int gemm,
                              float out[][LZ_Q4K16_ROWS]) {
    __m256 acc[LZ_GROUP][2], accMin[LZ_GROUP][2];
    _Pragma("GCC unroll 8")
    for (int v = 0; v < nv; v++) {
        _Pragma("GCC unroll 8")
        for (int h = 0; h < 2; h++) {
            acc[v][h] = accMin[v][h] = _mm256_setzero_ps();
        }
    }
    const int8_t *y[LZ_GROUP];
    const int32_t *bs[LZ_GROUP];
    lz_lanes16 sums[LZ_GROUP], mins[LZ_GROUP];
    for (int32_t b = 0; b < blocks; b++) {
        const uint8_t *blk = group + (int64_t) LZ_Q4K16_BLOCK * b;
        _Pragma("GCC unroll 8")
        for (int v = 0; v < nv; v++) {
            y[v] = a[v].q + 256 * b;
            bs[v] = a[v].bsums + 16 * b;
        }
        LZ_Q4K16_INTS(blk, y, bs, nv, gemm, sums, mins);
        _Pragma("GCC unroll 8")
        for (int h = 0; h < 2; h++) {
            __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (blk + LZ_Q4K16_D + 16 * h)));
            __m256 dmin = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (blk + LZ_Q4K16_DMIN + 16 * h)));
            _Pragma("GCC unroll 8")
            for (int v = 0; v < nv; v++) {
                __m256 dy = _mm256_set1_ps(a[v].scales[b]);
                if (gemm) {
                    __m256 d = _mm256_mul_ps(dy, dw), m = _mm256_mul_ps(dy, dmin);
                    _Pragma("GCC unroll 8")
                    for (int p = 0; p < 4; p++) {
                        __m256 s = _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *) (sums[v][p] + 8 * h)));
                        __m256 n = _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *) (mins[v][p] + 8 * h)));
                        acc[v][h] = _mm256_fmadd_ps(s, d, acc[v][h]);
                        accMin[v][h] = _mm256_fmadd_ps(n, m, accMin[v][h]);
                    }
                } else {
                    __m256 s = _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *) (sums[v][0] + 8 * h)));
                    __m256 n = _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *) (mins[v][0] + 8 * h)));
                    acc[v][h] = _mm256_fmadd_ps(s, _mm256_mul_ps(dw, dy), acc[v][h]);
                    accMin[v][h] = _mm256_fmadd_ps(n, _mm256_mul_ps(dmin, dy), accMin[v][h]);
                }
            }
        }
    }
    _Pragma("GCC unroll 8")
    for (int v = 0; v < nv; v++) {
        _Pragma("GCC unroll 8")
        for (int h = 0; h < 2; h++) {
            _mm256_storeu_ps(out[v] + 8 * h, _mm256_sub_ps(acc[v][h], accMin[v][h]));
        }
    }
}

static void lz_q4k16_group1(const uint8_t *group, const lz_act *a, int32_t blocks, int gemm, float out[][LZ_Q4K16_ROWS]) {
    lz_q4k16_group(group, a, 1, blocks, gemm, out);
}

static void lz_q4k16_group4(const uint8_t *group, const lz_act *a, int32_t blocks, int gemm, float out[][LZ_Q4K16_ROWS]) {
    lz_q4k16_group(group, a, LZ_GROUP, blocks, gemm, out);
}

/*
 * LZ_NAME's contract on the packed layout: rowBytes is a row's share of a group (148 bytes per super-block), so
 * group g starts at 16 g rowBytes. A range that starts or ends inside a group computes the whole group and keeps
 * its rows (each row's value does not depend on its neighbours).
 */
static void lz_q4k16_rows(int32_t kernel, const uint8_t *w, int64_t rowBytes, int32_t r0, int32_t r1, int32_t cols,
                          const int64_t *acts, int32_t nvec, float *out, int32_t outStride, int32_t outBase) {
    int gemm = kernel == LZ_Q4K16_GEMM;
    int32_t blocks = cols / 256;
    for (int32_t g = r0 / LZ_Q4K16_ROWS; g * LZ_Q4K16_ROWS < r1; g++) {
        const uint8_t *group = w + (int64_t) LZ_Q4K16_ROWS * rowBytes * g;
        int32_t first = g * LZ_Q4K16_ROWS > r0 ? g * LZ_Q4K16_ROWS : r0;
        int32_t end = g * LZ_Q4K16_ROWS + LZ_Q4K16_ROWS < r1 ? g * LZ_Q4K16_ROWS + LZ_Q4K16_ROWS : r1;
        for (int32_t v = 0; v < nvec; v += LZ_GROUP) {
            int nv = nvec - v < LZ_GROUP ? nvec - v : LZ_GROUP;
            lz_act a[LZ_GROUP];
            float o[LZ_GROUP][LZ_Q4K16_ROWS];
            for (int i = 0; i < nv; i++) {
                a[i] = lz_act_at(acts[v + i], 256);
            }
            if (nv == LZ_GROUP) {
                lz_q4k16_group4(group, a, blocks, gemm, o);
            } else {
                for (int i = 0; i < nv; i++) {
                    lz_q4k16_group1(group, a + i, blocks, gemm, o + i);
                }
            }
            for (int i = 0; i < nv; i++) {
                for (int32_t r = first; r < end; r++) {
                    out[(int64_t) (v + i) * outStride + r - outBase] = o[i][r - g * LZ_Q4K16_ROWS];
                }
            }
        }
    }
}

#endif
