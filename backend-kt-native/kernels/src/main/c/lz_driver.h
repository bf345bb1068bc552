/*
 * kt-native's native kernels: the shared driver. Each ISA translation unit (lz_avx2.c, lz_avx512.c) defines its
 * exact-integer stages (LZ_Q8_0_LANES, LZ_Q4K_PAIRS, LZ_Q6K_LANES: the integers of one block, which are exact in any
 * order) and LZ_NAME, then includes this file, which adds the float folds. The folds are the only place where the
 * order of operations changes a bit, and they are written once here, in the orders of the Java reference kernels
 * (dev.lazarus.kt.tensor.GgmlKQuantKernels, Q8_0Kernel, TiledKQuantKernel): one driver by
 * (block layout x integer stage x float fold). Compiled with -ffp-contract=off so that no multiply and add fuse
 * where the reference rounds twice. The low-bit types' folds are lz_lowbit.h's, their integer stages
 * lz_lowbit_<isa>.h's (LZ_SB_HALVES, LZ_TB_LANES).
 */
#include "lz_common.h"
#include "lz_kernels.h"
#include "lz_lowbit.h"
#include "lz_grid.h"
#include "lz_q4k16.h"
#include "lz_q8016.h"
#if !defined(LZ_Q8_0_LANES) || !defined(LZ_Q4K_PAIRS) || !defined(LZ_Q6K_LANES) || !defined(LZ_NAME)
#error "the ISA unit defines LZ_Q8_0_LANES, LZ_Q4K_PAIRS, LZ_Q6K_LANES and LZ_NAME first (lz_avx2.c, lz_avx512.c)"
#endif

/* The eight 6-bit scales and mins of a Q4_K block's 12 bytes (ggml's get_scale_min_k4). */
static inline void lz_q4k_scales(const uint8_t *s, uint8_t sc[8], uint8_t mn[8]) {
    for (int j = 0; j < 4; j++) {
        sc[j] = s[j] & 63;
        mn[j] = s[j + 4] & 63;
        sc[j + 4] = (s[j + 8] & 0xF) | ((s[j] >> 6) << 4);
        mn[j + 4] = (s[j + 8] >> 4) | ((s[j + 4] >> 6) << 4);
    }
}

/* The float fold of one row against one activation: the reference orders, per block. */
typedef struct {
    __m256 lanes;
    float acc, accMin;
} lz_fold;

LZ_INLINE void lz_dot_q8_0(const uint8_t *row, const lz_act *a, int nv, int32_t cols, float *out) {
    __m256 acc[LZ_GROUP];
    for (int v = 0; v < nv; v++) {
        acc[v] = _mm256_setzero_ps();
    }
    const int8_t *y[LZ_GROUP];
    __m256i lanes[LZ_GROUP];
    for (int32_t b = 0; b < cols / 32; b++) {
        const uint8_t *blk = row + 34 * (int64_t) b;
        for (int v = 0; v < nv; v++) {
            y[v] = a[v].q + 32 * b;
        }
        LZ_Q8_0_LANES(blk + 2, y, nv, lanes);
        float dw = lz_f16(blk);
        for (int v = 0; v < nv; v++) {
            acc[v] = _mm256_fmadd_ps(_mm256_set1_ps(dw * a[v].scales[b]), _mm256_cvtepi32_ps(lanes[v]), acc[v]);
        }
    }
    for (int v = 0; v < nv; v++) {
        /* + 0: ggml adds its (zero) affine term, which turns a -0 sum into +0 */
        out[v] = lz_hsum8(acc[v]) + 0.0f;
    }
}

LZ_INLINE void lz_dot_q4k(const uint8_t *row, const lz_act *a, int nv, int32_t cols, int kernel, float *out) {
    lz_fold f[LZ_GROUP];
    for (int v = 0; v < nv; v++) {
        f[v].acc = f[v].accMin = 0;
    }
    const int8_t *y[LZ_GROUP];
    int32_t pairs[LZ_GROUP][4];
    for (int32_t b = 0; b < cols / 256; b++) {
        const uint8_t *blk = row + 144 * (int64_t) b;
        uint8_t sc[8], mn[8];
        lz_q4k_scales(blk + 4, sc, mn);
        for (int v = 0; v < nv; v++) {
            y[v] = a[v].q + 256 * b;
        }
        LZ_Q4K_PAIRS(blk + 16, y, nv, sc, pairs, kernel == LZ_Q4K_GEMM);
        float dw = lz_f16(blk), dmin = lz_f16(blk + 2);
        for (int v = 0; v < nv; v++) {
            const int32_t *bs = a[v].bsums + 16 * b;
            int32_t mins[4];
            for (int p = 0; p < 4; p++) {
                mins[p] = mn[2 * p] * (bs[4 * p] + bs[4 * p + 1]) + mn[2 * p + 1] * (bs[4 * p + 2] + bs[4 * p + 3]);
            }
            float dy = a[v].scales[b];
            if (kernel == LZ_Q4K_GEMM) {
                float d = dy * dw, m = dy * dmin;
                for (int p = 0; p < 4; p++) {
                    f[v].acc = __builtin_fmaf((float) pairs[v][p], d, f[v].acc);
                    f[v].accMin = __builtin_fmaf((float) mins[p], m, f[v].accMin);
                }
            } else {
                int32_t s1 = pairs[v][0] + pairs[v][1] + pairs[v][2] + pairs[v][3];
                int32_t s2 = mins[0] + mins[1] + mins[2] + mins[3];
                if (kernel == LZ_Q4K_TILED) {
                    f[v].acc = __builtin_fmaf(__builtin_fmaf(-dmin, (float) s2, dw * (float) s1), dy, f[v].acc);
                } else {
                    f[v].acc = __builtin_fmaf((float) s1, dw * dy, f[v].acc);
                    f[v].accMin = __builtin_fmaf((float) s2, dmin * dy, f[v].accMin);
                }
            }
        }
    }
    for (int v = 0; v < nv; v++) {
        out[v] = kernel == LZ_Q4K_TILED ? f[v].acc : f[v].acc - f[v].accMin;
    }
}

LZ_INLINE void lz_dot_q6k(const uint8_t *row, const lz_act *a, int nv, int32_t cols, int kernel, float *out) {
    lz_fold f[LZ_GROUP];
    for (int v = 0; v < nv; v++) {
        f[v].lanes = _mm256_setzero_ps();
        f[v].acc = 0;
    }
    const int8_t *y[LZ_GROUP];
    __m256i raw[LZ_GROUP];
    for (int32_t b = 0; b < cols / 256; b++) {
        const uint8_t *blk = row + 210 * (int64_t) b;
        const int8_t *sc = (const int8_t *) (blk + 192);
        for (int v = 0; v < nv; v++) {
            y[v] = a[v].q + 256 * b;
        }
        LZ_Q6K_LANES(blk, y, nv, raw);
        float dw = lz_f16(blk + 208);
        for (int v = 0; v < nv; v++) {
            const int32_t *bs = a[v].bsums + 16 * b;
            int32_t lanes[8];
            _mm256_storeu_si256((__m256i *) lanes, raw[v]);
            /* the -32 comes off per lane as 32 (scale bsum) of sub-blocks 2k and 2k + 1, as ggml does */
            for (int k = 0; k < 8; k++) {
                lanes[k] -= 32 * (sc[2 * k] * bs[2 * k] + sc[2 * k + 1] * bs[2 * k + 1]);
            }
            float dy = a[v].scales[b];
            if (kernel == LZ_Q6K_TILED) {
                int32_t s1 = 0;
                for (int k = 0; k < 8; k++) {
                    s1 += lanes[k];
                }
                f[v].acc = __builtin_fmaf(dw * (float) s1, dy, f[v].acc);
            } else {
                __m256 l = _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *) lanes));
                f[v].lanes = _mm256_fmadd_ps(_mm256_set1_ps(dy * dw), l, f[v].lanes);
            }
        }
    }
    for (int v = 0; v < nv; v++) {
        out[v] = kernel == LZ_Q6K_TILED ? f[v].acc : lz_hsum8(f[v].lanes);
    }
}

/* out[v] = row . a[v] for v < nv (1 or LZ_GROUP: the compiler specialises each). */
LZ_INLINE void lz_dot(int kernel, const uint8_t *row, const lz_act *a, int nv, int32_t cols, float *out) {
    switch (kernel) {
        case LZ_Q8_0: lz_dot_q8_0(row, a, nv, cols, out); break;
        case LZ_Q6K:
        case LZ_Q6K_TILED: lz_dot_q6k(row, a, nv, cols, kernel, out); break;
        case LZ_Q4K_GEMV:
        case LZ_Q4K_GEMM:
        case LZ_Q4K_TILED: lz_dot_q4k(row, a, nv, cols, kernel, out); break;
        default:
            if (kernel >= LZ_IQ2XXS) {
                lz_dot_grid(row, a, nv, cols, (kernel - LZ_IQ2XXS) / 2, (kernel - LZ_IQ2XXS) % 2, out);
            } else {
                lz_dot_lowbit(kernel, row, a, nv, cols, out);
            }
            break;
    }
}

static void lz_dot1(int kernel, const uint8_t *row, const lz_act *a, int32_t cols, float *out) {
    lz_dot(kernel, row, a, 1, cols, out);
}

static void lz_dot4(int kernel, const uint8_t *row, const lz_act *a, int32_t cols, float *out) {
    lz_dot(kernel, row, a, LZ_GROUP, cols, out);
}

/* Rows of a tile share the first-level cache for all vectors of a batch. */
#define LZ_ROW_TILE 16

/*
 * out[v * outStride + r - outBase] = row r . activation v, for rows [r0, r1) of the matrix at w (rows rowBytes
 * apart, in ggml's block layout of the kernel's type) and the nvec activations whose addresses acts holds.
 */
void LZ_NAME(int32_t kernel, const uint8_t *w, int64_t rowBytes, int32_t r0, int32_t r1, int32_t cols,
             const int64_t *acts, int32_t nvec, float *out, int32_t outStride, int32_t outBase) {
    if (kernel == LZ_Q4K16_GEMV || kernel == LZ_Q4K16_GEMM) {
        lz_q4k16_rows(kernel, w, rowBytes, r0, r1, cols, acts, nvec, out, outStride, outBase);
        return;
    }
    if (kernel == LZ_Q8_0_16) {
        lz_q8016_rows(w, rowBytes, r0, r1, cols, acts, nvec, out, outStride, outBase);
        return;
    }
    int32_t block = kernel == LZ_Q8_0 ? 32 : kernel >= LZ_Q2K ? lz_lowbit_act_block(kernel) : 256;
    for (int32_t tile = r0; tile < r1; tile += LZ_ROW_TILE) {
        int32_t end = tile + LZ_ROW_TILE < r1 ? tile + LZ_ROW_TILE : r1;
        for (int32_t v = 0; v < nvec; v += LZ_GROUP) {
            int nv = nvec - v < LZ_GROUP ? nvec - v : LZ_GROUP;
            lz_act a[LZ_GROUP];
            for (int i = 0; i < nv; i++) {
                a[i] = lz_act_at(acts[v + i], block);
            }
            for (int32_t r = tile; r < end; r++) {
                float o[LZ_GROUP];
                if (nv == LZ_GROUP) {
                    lz_dot4(kernel, w + rowBytes * r, a, cols, o);
                } else {
                    for (int i = 0; i < nv; i++) {
                        lz_dot1(kernel, w + rowBytes * r, a + i, cols, o + i);
                    }
                }
                for (int i = 0; i < nv; i++) {
                    out[(int64_t) (v + i) * outStride + r - outBase] = o[i];
                }
            }
        }
    }
}
