/*
 * The grid I-quants (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M) against Q8_K, in
 * dev.lazarus.kt.tensor.SubBlockKQuantKernel's VEC_DOT and TILED orders (included by lz_driver.h after lz_lowbit.h).
 * A super-block is unpacked once into its 256 signed grid values (and IQ1's ±1 shift signs) as GridQuants.codes does,
 * from the codebooks Java hands over (lz_grid_tables.h); the ISA unit's LZ_SB_HALVES then takes them as a layout of
 * its own (LZ_SB_GRID), so every integer is the exact one of the Java kernel and only the folds below round.
 */
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

/* n bytes of a grid entry into q (unsigned; lz_grid_signs negates them later). */
static inline void lz_grid_put(uint64_t entry, int n, int8_t *q) {
    memcpy(q, &entry, n);
}

/* Value j of each 8-value group g negated where bit j of signs[g] is set: per 32 values, the four sign bytes spread
 * over their bytes, a byte's own bit picked out, then q xor m - m (m = -1 where set). */
static inline __attribute__((always_inline)) void lz_grid_signs(int8_t *q, const uint8_t *signs) {
    const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                            2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i bit = _mm256_set1_epi64x((long long) 0x8040201008040201ULL);
    for (int c = 0; c < 8; c++) {
        int32_t s4;
        memcpy(&s4, signs + 4 * c, 4);
        __m256i m = _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(_mm256_set1_epi32(s4), spread), bit), bit);
        __m256i v = _mm256_loadu_si256((const __m256i *) (q + 32 * c));
        _mm256_storeu_si256((__m256i *) (q + 32 * c), _mm256_sub_epi8(_mm256_xor_si256(v, m), m));
    }
}

static inline void lz_grid_scales(int8_t *sc, int ib, uint32_t lo, uint32_t hi) {
    sc[2 * ib] = (int8_t) (2 * lo + 1);
    sc[2 * ib + 1] = (int8_t) (2 * hi + 1);
}

/* The layouts of GridQuants' table (bytes per super-block in the comments). */
enum { LZ_G_IQ2XXS, LZ_G_IQ2XS, LZ_G_IQ2S, LZ_G_IQ3XXS, LZ_G_IQ3S, LZ_G_IQ1S, LZ_G_IQ1M };

static inline __attribute__((always_inline)) void lz_grid_unpack(int type, const uint8_t *blk, lz_grid_block *o) {
    const lz_grids *t = lz_grid_tables;
    uint8_t signs[32]; /* per 8 values, applied after the switch */
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
    switch (type) {
        case LZ_G_IQ2XXS: /* 66 */
            for (int ib = 0; ib < 8; ib++) {
                const uint8_t *at = blk + 2 + 8 * ib;
                uint32_t aux = lz_u32(at + 4);
                for (int l = 0; l < 4; l++) {
                    lz_grid_put(t->iq2xxs[at[l]], 8, o->q + 32 * ib + 8 * l);
                    signs[4 * ib + l] = t->ksigns[(aux >> 7 * l) & 127];
                }
                lz_grid_scales(o->sc, ib, aux >> 28, aux >> 28);
            }
            break;
        case LZ_G_IQ2XS: /* 74 */
            for (int g = 0; g < 32; g++) {
                uint32_t v = lz_u16(blk + 2 + 2 * g);
                lz_grid_put(t->iq2xs[v & 511], 8, o->q + 8 * g);
                signs[g] = t->ksigns[v >> 9];
            }
            for (int ib = 0; ib < 8; ib++) {
                lz_grid_scales(o->sc, ib, blk[66 + ib] & 0xF, blk[66 + ib] >> 4);
            }
            break;
        case LZ_G_IQ2S: /* 82 */
            for (int g = 0; g < 32; g++) {
                int ib = g / 4, l = g % 4;
                uint32_t index = blk[2 + g] | ((blk[66 + ib] << (8 - 2 * l)) & 0x300);
                lz_grid_put(t->iq2s[index], 8, o->q + 8 * g);
                signs[g] = blk[34 + g];
            }
            for (int ib = 0; ib < 8; ib++) {
                lz_grid_scales(o->sc, ib, blk[74 + ib] & 0xF, blk[74 + ib] >> 4);
            }
            break;
        case LZ_G_IQ3XXS: /* 98 */
            for (int ib = 0; ib < 8; ib++) {
                uint32_t aux = lz_u32(blk + 66 + 4 * ib);
                for (int l = 0; l < 4; l++) {
                    const uint8_t *qs = blk + 2 + 8 * ib + 2 * l;
                    lz_grid_put(t->iq3xxs[qs[0]], 4, o->q + 32 * ib + 8 * l);
                    lz_grid_put(t->iq3xxs[qs[1]], 4, o->q + 32 * ib + 8 * l + 4);
                    signs[4 * ib + l] = t->ksigns[(aux >> 7 * l) & 127];
                }
                lz_grid_scales(o->sc, ib, aux >> 28, aux >> 28);
            }
            break;
        case LZ_G_IQ3S: /* 110 */
            for (int ib = 0; ib < 8; ib++) {
                uint32_t qh = blk[66 + ib];
                for (int l = 0; l < 4; l++) {
                    const uint8_t *qs = blk + 2 + 8 * ib + 2 * l;
                    lz_grid_put(t->iq3s[qs[0] | ((qh << (8 - 2 * l)) & 256)], 4, o->q + 32 * ib + 8 * l);
                    lz_grid_put(t->iq3s[qs[1] | ((qh << (7 - 2 * l)) & 256)], 4, o->q + 32 * ib + 8 * l + 4);
                }
                uint32_t ls = (blk[106 + ib / 2] >> (4 * (ib % 2))) & 0xF;
                lz_grid_scales(o->sc, ib, ls, ls);
            }
            lz_grid_signs(o->q, blk + 74); /* IQ3_S's sign bytes are in value order already */
            return;
        case LZ_G_IQ1S: /* 50 */
            for (int ib = 0; ib < 8; ib++) {
                uint32_t qh = lz_u16(blk + 34 + 2 * ib);
                for (int l = 0; l < 4; l++) {
                    lz_grid_put(t->iq1s[blk[2 + 4 * ib + l] | (((qh >> 3 * l) & 7) << 8)], 8, o->q + 32 * ib + 8 * l);
                }
                memset(o->delta + 32 * ib, qh & 0x8000 ? -1 : 1, 32);
                lz_grid_scales(o->sc, ib, (qh >> 12) & 7, (qh >> 12) & 7);
            }
            return; /* IQ1's grid values are signed */
        default: /* IQ1_M, 56 */
            for (int g = 0; g < 32; g++) {
                uint32_t qh = blk[32 + g / 2] >> (4 * (g % 2));
                lz_grid_put(t->iq1s[blk[g] | ((qh & 7) << 8)], 8, o->q + 8 * g);
                memset(o->delta + 8 * g, qh & 8 ? -1 : 1, 8);
            }
            for (int ib = 0; ib < 8; ib++) {
                uint32_t w = lz_u16(blk + 48 + 2 * (ib / 2));
                lz_grid_scales(o->sc, ib, (w >> (6 * (ib % 2))) & 7, (w >> (6 * (ib % 2) + 3)) & 7);
            }
            return;
    }
    lz_grid_signs(o->q, signs);
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
