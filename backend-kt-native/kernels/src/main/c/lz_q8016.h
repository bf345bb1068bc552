/*
 * Q8_0 in the native 16-row layout (dev.lazarus.kt.quant.q8_0.Q8_0NativePacked): rows in groups of 16, the 16 rows'
 * block b (32 values) side by side in LZ_Q8016_BLOCK bytes:
 *
 *   0    16 f16 d (row r at 2r)
 *   32   8 x 64 quant bytes: chunk k holds, row r at 4r, the row's quants 4k .. 4k + 3, each + 128 (as u8)
 *
 * lz_dot_q8_0's lane k of a block is the dot of values 4k .. 4k + 3; here one vpdpbusd of chunk k against the
 * activation's four values broadcast gives that lane for all 16 rows at once (the quants + 128 are its unsigned
 * operand; the sum starts at -128 (y_4k + .. + y_4k+3), so it ends exact). The fold is lz_dot_q8_0's, lane by lane:
 * acc[k] holds lane k, one float lane per row (fma(dw dy, lane, acc) per block in block order), then lz_hsum8 across
 * acc[0..7] and + 0. Where ggml's row kernel is bound by its one fma chain per row and the per-row f16 scale, this
 * layout has 8 chains per 16 rows and loads the 16 scales with one vector (issue 15: 0.87x ggml's AMX-buffer decode
 * on Sapphire Rapids at one thread, docs/benchmarks.md#kernel-findings).
 */
#ifndef LZ_Q8016_H
#define LZ_Q8016_H
#include "lz_common.h"

#define LZ_Q8016_ROWS 16
#define LZ_Q8016_BLOCK 544
/* activations per pass over a group: 8 accumulators each, 32 vector registers */
#define LZ_Q8016_ACTS 2

/* -128 times the sums of four activation values, one per lane of every block: the start of each lane's dot (made per
 * call, which in decode is a 16-row range: vectorised, or it costs as much as the rows' own dots). */
static void lz_q8016_comp(const int8_t *q, int32_t cols, int32_t *comp) {
    int32_t i = 0;
#if defined(__AVX512VNNI__)
    for (; i + 64 <= cols; i += 64) {
        __m512i s = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8((char) 0x80), _mm512_loadu_si512(q + i));
        _mm512_storeu_si512(comp + i / 4, _mm512_sub_epi32(_mm512_setzero_si512(), s));
    }
#endif
    for (; i < cols; i += 4) {
        comp[i / 4] = -128 * (q[i] + q[i + 1] + q[i + 2] + q[i + 3]);
    }
}

#if defined(__AVX512VNNI__)
/* Rows [16 g, 16 g + 16) against nv (1..LZ_Q8016_ACTS) activations: out[v][r]. */
LZ_INLINE void lz_q8016_group(const uint8_t *group, const lz_act *a, const int32_t *const *comp, int nv,
                              int32_t blocks, float out[][LZ_Q8016_ROWS]) {
    __m512 acc[LZ_Q8016_ACTS][8];
    _Pragma("GCC unroll 8")
    for (int v = 0; v < nv; v++) {
        _Pragma("GCC unroll 8")
        for (int k = 0; k < 8; k++) {
            acc[v][k] = _mm512_setzero_ps();
        }
    }
    for (int32_t b = 0; b < blocks; b++) {
        const uint8_t *blk = group + (int64_t) LZ_Q8016_BLOCK * b;
        __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) blk));
        __m512 d[LZ_Q8016_ACTS];
        _Pragma("GCC unroll 8")
        for (int v = 0; v < nv; v++) {
            d[v] = _mm512_mul_ps(dw, _mm512_set1_ps(a[v].scales[b]));
        }
        _Pragma("GCC unroll 8")
        for (int k = 0; k < 8; k++) {
            __m512i w = _mm512_loadu_si512(blk + 32 + 64 * k);
            _Pragma("GCC unroll 8")
            for (int v = 0; v < nv; v++) {
                int32_t y4;
                memcpy(&y4, a[v].q + 32 * b + 4 * k, 4);
                __m512i s = _mm512_dpbusd_epi32(_mm512_set1_epi32(comp[v][8 * b + k]), w, _mm512_set1_epi32(y4));
                acc[v][k] = _mm512_fmadd_ps(d[v], _mm512_cvtepi32_ps(s), acc[v][k]);
            }
        }
    }
    _Pragma("GCC unroll 8")
    for (int v = 0; v < nv; v++) {
        /* lz_hsum8 per row: (4 + 0) + (6 + 2), (5 + 1) + (7 + 3), then + 0 as lz_dot_q8_0 */
        __m512 r0 = _mm512_add_ps(acc[v][4], acc[v][0]), r1 = _mm512_add_ps(acc[v][5], acc[v][1]);
        __m512 r2 = _mm512_add_ps(acc[v][6], acc[v][2]), r3 = _mm512_add_ps(acc[v][7], acc[v][3]);
        __m512 sum = _mm512_add_ps(_mm512_add_ps(r0, r2), _mm512_add_ps(r1, r3));
        _mm512_storeu_ps(out[v], _mm512_add_ps(sum, _mm512_setzero_ps()));
    }
}
#else
/* Units without VNNI (the engine packs Q8_0 only where AVX-512 VNNI runs): the same integers and folds, lane by lane. */
LZ_INLINE void lz_q8016_group(const uint8_t *group, const lz_act *a, const int32_t *const *comp, int nv,
                              int32_t blocks, float out[][LZ_Q8016_ROWS]) {
    (void) comp;
    for (int v = 0; v < nv; v++) {
        for (int r = 0; r < LZ_Q8016_ROWS; r++) {
            float acc[8] = {0};
            for (int32_t b = 0; b < blocks; b++) {
                const uint8_t *blk = group + (int64_t) LZ_Q8016_BLOCK * b;
                float d = lz_f16(blk + 2 * r) * a[v].scales[b];
                for (int k = 0; k < 8; k++) {
                    int32_t s = 0;
                    for (int i = 0; i < 4; i++) {
                        s += (int8_t) (blk[32 + 64 * k + 4 * r + i] ^ 0x80) * a[v].q[32 * b + 4 * k + i];
                    }
                    acc[k] = __builtin_fmaf(d, (float) s, acc[k]);
                }
            }
            float r0 = acc[4] + acc[0], r1 = acc[5] + acc[1], r2 = acc[6] + acc[2], r3 = acc[7] + acc[3];
            out[v][r] = (r0 + r2) + (r1 + r3) + 0.0f;
        }
    }
}
#endif

static void lz_q8016_group1(const uint8_t *group, const lz_act *a, const int32_t *const *comp, int32_t blocks,
                            float out[][LZ_Q8016_ROWS]) {
    lz_q8016_group(group, a, comp, 1, blocks, out);
}

static void lz_q8016_groupN(const uint8_t *group, const lz_act *a, const int32_t *const *comp, int32_t blocks,
                            float out[][LZ_Q8016_ROWS]) {
    lz_q8016_group(group, a, comp, LZ_Q8016_ACTS, blocks, out);
}

/*
 * LZ_NAME's contract on the packed layout, as lz_q4k16_rows': rowBytes is a row's share of a group (34 bytes per
 * block), group g starts at 16 g rowBytes; a range that starts or ends inside a group computes the whole group and
 * keeps its rows. Every activation's lane starts are made once per call; each group then meets all activations while
 * it is in the first-level cache.
 */
static void lz_q8016_rows(const uint8_t *w, int64_t rowBytes, int32_t r0, int32_t r1, int32_t cols,
                          const int64_t *acts, int32_t nvec, float *out, int32_t outStride, int32_t outBase) {
    int32_t blocks = cols / 32;
    int32_t onStack[4096];
    int64_t need = (int64_t) nvec * (cols / 4);
    int32_t *comp = need <= 4096 ? onStack : malloc(sizeof(int32_t) * need);
    if (comp == NULL) {
        abort();
    }
    for (int32_t v = 0; v < nvec; v++) {
        lz_q8016_comp(lz_act_at(acts[v], 32).q, cols, comp + (int64_t) v * (cols / 4));
    }
    for (int32_t g = r0 / LZ_Q8016_ROWS; g * LZ_Q8016_ROWS < r1; g++) {
        const uint8_t *group = w + (int64_t) LZ_Q8016_ROWS * rowBytes * g;
        int32_t first = g * LZ_Q8016_ROWS > r0 ? g * LZ_Q8016_ROWS : r0;
        int32_t end = g * LZ_Q8016_ROWS + LZ_Q8016_ROWS < r1 ? g * LZ_Q8016_ROWS + LZ_Q8016_ROWS : r1;
        for (int32_t v = 0; v < nvec; v += LZ_Q8016_ACTS) {
            int nv = nvec - v < LZ_Q8016_ACTS ? nvec - v : LZ_Q8016_ACTS;
            lz_act a[LZ_Q8016_ACTS];
            const int32_t *c[LZ_Q8016_ACTS];
            float o[LZ_Q8016_ACTS][LZ_Q8016_ROWS];
            for (int i = 0; i < nv; i++) {
                a[i] = lz_act_at(acts[v + i], 32);
                c[i] = comp + (int64_t) (v + i) * (cols / 4);
            }
            if (nv == LZ_Q8016_ACTS) {
                lz_q8016_groupN(group, a, c, blocks, o);
            } else {
                for (int i = 0; i < nv; i++) {
                    lz_q8016_group1(group, a + i, c + i, blocks, o + i);
                }
            }
            for (int i = 0; i < nv; i++) {
                for (int32_t r = first; r < end; r++) {
                    out[(int64_t) (v + i) * outStride + r - outBase] = o[i][r - g * LZ_Q8016_ROWS];
                }
            }
        }
    }
    if (comp != onStack) {
        free(comp);
    }
}

#endif
