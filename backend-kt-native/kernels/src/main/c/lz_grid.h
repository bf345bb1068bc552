/*
 * The grid I-quants (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M) against Q8_K, in
 * dev.lazarus.kt.quant.lowbit.SubBlockKQuantKernel's VEC_DOT and TILED orders.
 * A super-block is unpacked once into its 256 signed grid values (and IQ1's ±1 shift signs) as GridQuants.codes does,
 * from the codebooks Java hands over (lz_grid_tables.h); the ISA unit's LZ_SB_HALVES then takes them as a layout of
 * its own (LZ_SB_GRID), so every integer is the exact one of the Java kernel and only the folds below round.
 */
#ifndef LZ_GRID_H
#define LZ_GRID_H
#include "lz_common.h"
#include "lz_lowbit.h"
#include "lz_grid_tables.h"

/* One unpacked super-block: values and shift signs as int8, the sixteen odd scales 2·ls + 1, d. */
typedef struct {
    int8_t q[256];
    int8_t delta[256];
    int8_t sc[16];
    float d;
} lz_grid_block;

static inline uint32_t lz_u32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline uint32_t lz_u16(const uint8_t *p) {
    return p[0] | (uint32_t) p[1] << 8;
}

/*
 * 32 values from four 8-value grid entries (e0: values 0-7), negated where bit j of sign byte k of s4 is set (value
 * 8k + j): built in registers and stored once, so that the integer stage's 32-byte loads take the store whole.
 */
static inline __attribute__((always_inline)) void lz_grid_chunk(int8_t *q, uint64_t e0, uint64_t e1, uint64_t e2,
                                                                uint64_t e3, uint32_t s4) {
    const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                            2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i bit = _mm256_set1_epi64x((long long) 0x8040201008040201ULL);
    __m256i m = _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(_mm256_set1_epi32((int32_t) s4), spread), bit), bit);
    __m256i v = _mm256_set_epi64x((long long) e3, (long long) e2, (long long) e1, (long long) e0);
    _mm256_storeu_si256((__m256i *) q, _mm256_sub_epi8(_mm256_xor_si256(v, m), m));
}

/* Two 4-value grid entries as one 8-value one. */
static inline uint64_t lz_grid_pair(uint32_t lo, uint32_t hi) {
    return lo | (uint64_t) hi << 32;
}

/* Eight bytes of IQ1's shift sign: -1 where negative, else 1. */
static inline uint64_t lz_grid_shift(int negative) {
    return negative ? 0xFFFFFFFFFFFFFFFFULL : 0x0101010101010101ULL;
}

static inline void lz_grid_scales(int8_t *sc, int ib, uint32_t lo, uint32_t hi) {
    sc[2 * ib] = (int8_t) (2 * lo + 1);
    sc[2 * ib + 1] = (int8_t) (2 * hi + 1);
}

/* The layouts of GridQuants' table (bytes per super-block in the comments). */
enum { LZ_G_IQ2XXS, LZ_G_IQ2XS, LZ_G_IQ2S, LZ_G_IQ3XXS, LZ_G_IQ3S, LZ_G_IQ1S, LZ_G_IQ1M };

/* Super-block blk as GridQuants.codes, scales, deltas and d decode it; chunk ib is values 32ib..32ib + 31. */
static inline __attribute__((always_inline)) void lz_grid_unpack(int type, const uint8_t *blk, lz_grid_block *o) {
    const lz_grids *t = lz_grid_tables;
    if (type == LZ_G_IQ1M) {
        uint32_t bits = 0;
        for (int i = 0; i < 4; i++) {
            bits |= (lz_u16(blk + 48 + 2 * i) >> 12) << (4 * i);
        }
        uint8_t h[2] = {(uint8_t) bits, (uint8_t) (bits >> 8)};
        o->d = lz_f16(h);
    } else {
        o->d = lz_f16(blk);
    }
    for (int ib = 0; ib < 8; ib++) {
        int8_t *q = o->q + 32 * ib;
        switch (type) {
            case LZ_G_IQ2XXS: { /* 66 */
                const uint8_t *at = blk + 2 + 8 * ib;
                uint32_t aux = lz_u32(at + 4), s4 = 0;
                for (int l = 0; l < 4; l++) {
                    s4 |= (uint32_t) t->ksigns[(aux >> 7 * l) & 127] << 8 * l;
                }
                lz_grid_chunk(q, t->iq2xxs[at[0]], t->iq2xxs[at[1]], t->iq2xxs[at[2]], t->iq2xxs[at[3]], s4);
                lz_grid_scales(o->sc, ib, aux >> 28, aux >> 28);
                break;
            }
            case LZ_G_IQ2XS: { /* 74 */
                uint32_t v[4], s4 = 0;
                for (int l = 0; l < 4; l++) {
                    v[l] = lz_u16(blk + 2 + 8 * ib + 2 * l);
                    s4 |= (uint32_t) t->ksigns[v[l] >> 9] << 8 * l;
                }
                lz_grid_chunk(q, t->iq2xs[v[0] & 511], t->iq2xs[v[1] & 511], t->iq2xs[v[2] & 511], t->iq2xs[v[3] & 511], s4);
                lz_grid_scales(o->sc, ib, blk[66 + ib] & 0xF, blk[66 + ib] >> 4);
                break;
            }
            case LZ_G_IQ2S: { /* 82 */
                uint32_t h = blk[66 + ib];
                const uint8_t *qs = blk + 2 + 4 * ib;
                lz_grid_chunk(q, t->iq2s[qs[0] | ((h << 8) & 0x300)], t->iq2s[qs[1] | ((h << 6) & 0x300)],
                              t->iq2s[qs[2] | ((h << 4) & 0x300)], t->iq2s[qs[3] | ((h << 2) & 0x300)],
                              lz_u32(blk + 34 + 4 * ib));
                lz_grid_scales(o->sc, ib, blk[74 + ib] & 0xF, blk[74 + ib] >> 4);
                break;
            }
            case LZ_G_IQ3XXS: { /* 98 */
                uint32_t aux = lz_u32(blk + 66 + 4 * ib), s4 = 0;
                const uint8_t *qs = blk + 2 + 8 * ib;
                for (int l = 0; l < 4; l++) {
                    s4 |= (uint32_t) t->ksigns[(aux >> 7 * l) & 127] << 8 * l;
                }
                lz_grid_chunk(q, lz_grid_pair(t->iq3xxs[qs[0]], t->iq3xxs[qs[1]]),
                              lz_grid_pair(t->iq3xxs[qs[2]], t->iq3xxs[qs[3]]),
                              lz_grid_pair(t->iq3xxs[qs[4]], t->iq3xxs[qs[5]]),
                              lz_grid_pair(t->iq3xxs[qs[6]], t->iq3xxs[qs[7]]), s4);
                lz_grid_scales(o->sc, ib, aux >> 28, aux >> 28);
                break;
            }
            case LZ_G_IQ3S: { /* 110; the sign bytes are in value order */
                uint32_t qh = blk[66 + ib];
                const uint8_t *qs = blk + 2 + 8 * ib;
                uint64_t e[4];
                for (int l = 0; l < 4; l++) {
                    e[l] = lz_grid_pair(t->iq3s[qs[2 * l] | ((qh << (8 - 2 * l)) & 256)],
                                        t->iq3s[qs[2 * l + 1] | ((qh << (7 - 2 * l)) & 256)]);
                }
                lz_grid_chunk(q, e[0], e[1], e[2], e[3], lz_u32(blk + 74 + 4 * ib));
                uint32_t ls = (blk[106 + ib / 2] >> (4 * (ib % 2))) & 0xF;
                lz_grid_scales(o->sc, ib, ls, ls);
                break;
            }
            case LZ_G_IQ1S: { /* 50; IQ1's grid values are signed */
                uint32_t qh = lz_u16(blk + 34 + 2 * ib);
                const uint8_t *qs = blk + 2 + 4 * ib;
                lz_grid_chunk(q, t->iq1s[qs[0] | (qh & 7) << 8], t->iq1s[qs[1] | ((qh >> 3) & 7) << 8],
                              t->iq1s[qs[2] | ((qh >> 6) & 7) << 8], t->iq1s[qs[3] | ((qh >> 9) & 7) << 8], 0);
                uint64_t sh = lz_grid_shift(qh & 0x8000);
                lz_grid_chunk(o->delta + 32 * ib, sh, sh, sh, sh, 0);
                lz_grid_scales(o->sc, ib, (qh >> 12) & 7, (qh >> 12) & 7);
                break;
            }
            default: { /* IQ1_M, 56: per 8 values a nibble of qh, its bit 3 the shift's sign */
                uint32_t h = lz_u16(blk + 32 + 2 * ib);
                const uint8_t *qs = blk + 4 * ib;
                lz_grid_chunk(q, t->iq1s[qs[0] | (h & 7) << 8], t->iq1s[qs[1] | ((h >> 4) & 7) << 8],
                              t->iq1s[qs[2] | ((h >> 8) & 7) << 8], t->iq1s[qs[3] | ((h >> 12) & 7) << 8], 0);
                lz_grid_chunk(o->delta + 32 * ib, lz_grid_shift(h & 8), lz_grid_shift(h & 0x80),
                              lz_grid_shift(h & 0x800), lz_grid_shift(h & 0x8000), 0);
                uint32_t w = lz_u16(blk + 48 + 2 * (ib / 2));
                lz_grid_scales(o->sc, ib, (w >> (6 * (ib % 2))) & 7, (w >> (6 * (ib % 2) + 3)) & 7);
                break;
            }
        }
    }
}

/* SubBlockKQuantKernel's VEC_DOT (tiled = 0) or TILED fold of a grid I-quant row. */
LZ_INLINE void lz_dot_grid(const uint8_t *row, const lz_act *a, int nv, int32_t cols, int type, int tiled, float *out) {
    static const int32_t bytes[] = {66, 74, 82, 98, 110, 50, 56};
    /* the power of two ggml multiplies the sum by (GridQuants.post) */
    float post = type <= LZ_G_IQ2S ? 0.125f : type == LZ_G_IQ3XXS ? 0.25f : 1.0f;
    int iq1 = type >= LZ_G_IQ1S;
    __m256 lanes[LZ_GROUP], shifts[LZ_GROUP];
    float acc[LZ_GROUP], shift[LZ_GROUP];
    for (int v = 0; v < nv; v++) {
        lanes[v] = shifts[v] = _mm256_setzero_ps();
        acc[v] = shift[v] = 0;
    }
    const int8_t *y[LZ_GROUP];
    /* dhalves: IQ1's shift signs against y (zero for the others, which never read them) */
    __m256i halves[LZ_GROUP][2], dhalves[LZ_GROUP][2];
    memset(dhalves, 0, sizeof dhalves);
    lz_grid_block blk;
    for (int32_t b = 0; b < cols / 256; b++) {
        lz_grid_unpack(type, row + bytes[type] * (int64_t) b, &blk);
        for (int v = 0; v < nv; v++) {
            y[v] = a[v].q + 256 * b;
        }
        LZ_SB_HALVES(LZ_SB_GRID, (const uint8_t *) blk.q, blk.sc, y, nv, halves);
        if (iq1) {
            LZ_SB_HALVES(LZ_SB_GRID, (const uint8_t *) blk.delta, blk.sc, y, nv, dhalves);
        }
        for (int v = 0; v < nv; v++) {
            float dy = a[v].scales[b];
            if (tiled) {
                int32_t s1 = lz_lowbit_hsum_epi32(_mm256_add_epi32(halves[v][0], halves[v][1]));
                /* IQ1's tiled values are the integers 8·grid ± 1 (measured; SubBlockKQuantKernel) */
                float x = iq1 ? blk.d * (float) (8 * s1 + lz_lowbit_hsum_epi32(_mm256_add_epi32(dhalves[v][0], dhalves[v][1])))
                              : blk.d * (float) s1;
                acc[v] = __builtin_fmaf(x, dy, acc[v]);
                continue;
            }
            __m256 d = _mm256_set1_ps(dy * blk.d);
            lanes[v] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(_mm256_add_epi32(halves[v][0], halves[v][1])), lanes[v]);
            if (type == LZ_G_IQ1M) {
                shifts[v] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(_mm256_add_epi32(dhalves[v][0], dhalves[v][1])), shifts[v]);
            } else if (type == LZ_G_IQ1S) {
                shift[v] = __builtin_fmaf(dy * blk.d,
                        (float) lz_lowbit_hsum_epi32(_mm256_add_epi32(dhalves[v][0], dhalves[v][1])), shift[v]);
            }
        }
    }
    for (int v = 0; v < nv; v++) {
        if (tiled) {
            out[v] = (iq1 ? 0.125f : post) * acc[v];
        } else {
            float sum = post * lz_hsum8(lanes[v]);
            if (type == LZ_G_IQ1M) {
                sum += 0.125f * lz_hsum8(shifts[v]);
            } else if (type == LZ_G_IQ1S) {
                sum += 0.125f * shift[v];
            }
            out[v] = sum;
        }
    }
}

#endif
