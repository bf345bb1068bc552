// Row dot products of the GGUF block types the GPU takes (Q8_0, Q4_0, Q4_K, Q5_K, Q6_K) against one Q8_0
// activation, by a whole warp. The weights stay in their GGUF blocks; each lane owns a quarter (8 values) of a
// 32-value block, unpacks its 8 weight quants to bytes, and takes two dp4a against the activation's quants,
// which meet every type in 32-value blocks (the granularity of every type's scales here); the K-quants give
// each lane 2 x KQ_BYTES values of two sub-blocks instead (k_super_dot). Offsets and mins
// (Q4_0's 8, Q6_K's 32, the K-quants' dmin * m) come from the activation's block sum, itself a dp4a with ones:
// llama.cpp's CUDA path does the same with its Q8_1 activations (the sum stored in the block); the CPU path
// meets K-quants with Q8_K activations (256-value blocks), so the GPU's result is close to it, not equal.
//
// The type arguments are ggml's type ids (dev.lazarus.kt.gguf.GgmlType.id()).
#pragma once

#include "common.cuh"

#define GGML_Q4_0 2
#define GGML_Q8_0 8
#define GGML_Q4_K 12
#define GGML_Q5_K 13
#define GGML_Q6_K 14

// Four bytes from a 2-byte aligned address (Q4_0 and Q6_K blocks are 18 and 210 bytes long).
__device__ __forceinline__ uint32_t load_u32_a2(const uint8_t* p) {
    const uint16_t* h = (const uint16_t*)p;
    return (uint32_t)h[0] | ((uint32_t)h[1] << 16);
}

__device__ __forceinline__ uint32_t load_u32_a4(const uint8_t* p) {
    return *(const uint32_t*)p;
}

__device__ __forceinline__ float half_at(const uint8_t* p) {
    return __half2float(*(const __half*)p);
}

// The 6-bit scale and min of 32-value sub-block j of a Q4_K/Q5_K super-block (ggml's 12-byte packing).
__device__ __forceinline__ void k_scale_min(const uint8_t* s, int j, int* sc, int* m) {
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
        *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

// 32-value block b of a row (quarter 0..3 of it: this lane's 8 values) against activation block xb.
template <int T>
__device__ __forceinline__ float qblock_dot(const uint8_t* __restrict__ w, int b, const uint8_t* __restrict__ xb,
                                            int quarter);

template <>
__device__ __forceinline__ float qblock_dot<GGML_Q8_0>(const uint8_t* __restrict__ w, int b,
                                                       const uint8_t* __restrict__ xb, int quarter) {
    return block_dot(w + (long long)b * BLOCK_BYTES, xb, quarter);
}

// Q4_0, 18 bytes: f16 d, 16 bytes of nibbles (values j and j + 16 in byte j); value = d * (q - 8).
template <>
__device__ __forceinline__ float qblock_dot<GGML_Q4_0>(const uint8_t* __restrict__ w, int b,
                                                       const uint8_t* __restrict__ xb, int quarter) {
    const uint8_t* blk = w + (long long)b * 18;
    const uint8_t* qs = blk + 2 + (quarter & 1) * 8;
    int shift = (quarter >> 1) * 4;
    int x0 = load_i8x4(xb + 2 + quarter * 8), x1 = load_i8x4(xb + 2 + quarter * 8 + 4);
    int q0 = (int)((load_u32_a2(qs) >> shift) & 0x0F0F0F0Fu), q1 = (int)((load_u32_a2(qs + 4) >> shift) & 0x0F0F0F0Fu);
    int dot = __dp4a(q1, x1, __dp4a(q0, x0, 0));
    int sum = __dp4a(0x01010101, x1, __dp4a(0x01010101, x0, 0));
    return (float)(dot - 8 * sum) * (half_at(blk) * half_at(xb));
}

// Q4_K, 144 bytes per 256 values: f16 d, f16 dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles
// (each 64 values: 32 bytes, low nibbles for sub-block 2p, high nibbles for 2p + 1); value = d * sc * q - dmin * m.
// Q5_K (176 bytes) adds 32 bytes of fifth bits after the scales, bit j of byte l for value l of sub-block j.
// The K-quants take a whole super-block per KQ_LANES lanes rather than a 32-value block per 4 (qblock_dot): a
// lane loads its bytes of nibbles once and uses both halves (two sub-blocks), and unpacks those two sub-blocks'
// scales and mins once, so a warp covers four super-blocks per pass with half the weight loads per value. 8
// lanes (16 bytes of nibbles each) measured 1.16x the 4-lanes-per-block kernel on the skewed bench model's
// all-on-GPU Q4_K decode, 16 lanes 1.09x (docs/benchmarks.md#kernel-findings). 8 or 16 (Q6_K's 16-value scales).
#ifndef KQ_LANES
#define KQ_LANES 8
#endif
#define KQ_BYTES (128 / KQ_LANES) // bytes of nibbles per lane and sub-block pair

// Lane j (0..KQ_LANES-1) of super-block blk against the activation's 8 Q8_0 blocks at x.
template <bool FIVE>
__device__ __forceinline__ float k45_super_dot(const uint8_t* __restrict__ blk, const uint8_t* __restrict__ x, int j) {
    const int lanes_per_pair = KQ_LANES / 4;
    int p = j / lanes_per_pair;                // sub-blocks 2p (low nibbles) and 2p + 1 (high nibbles)
    int off = (j % lanes_per_pair) * KQ_BYTES; // this lane's first value in each of the two
    const uint8_t* qs = blk + (FIVE ? 48 : 16) + p * 32 + off;
    const uint8_t* xlo = x + 2 * p * BLOCK_BYTES;
    const uint8_t* xhi = xlo + BLOCK_BYTES;
    int dlo = 0, dhi = 0, slo = 0, shi = 0;
#pragma unroll
    for (int i = 0; i < KQ_BYTES; i += 4) {
        uint32_t q = load_u32_a4(qs + i);
        uint32_t lo = q & 0x0F0F0F0Fu, hi = (q >> 4) & 0x0F0F0F0Fu;
        if (FIVE) {
            uint32_t h = load_u32_a4(blk + 16 + off + i) >> (2 * p);
            lo |= (h & 0x01010101u) << 4;
            hi |= (h & 0x02020202u) << 3;
        }
        int a = load_i8x4(xlo + 2 + off + i), b = load_i8x4(xhi + 2 + off + i);
        dlo = __dp4a((int)lo, a, dlo);
        dhi = __dp4a((int)hi, b, dhi);
        slo = __dp4a(0x01010101, a, slo);
        shi = __dp4a(0x01010101, b, shi);
    }
    // ggml's 12-byte packing read as six 16-bit words: both sub-blocks' 6-bit scales (and mins) in one word
    const uint16_t* s16 = (const uint16_t*)(blk + 4);
    uint32_t sc, m;
    if (p < 2) {
        sc = s16[p] & 0x3F3Fu;
        m = s16[p + 2] & 0x3F3Fu;
    } else {
        sc = (s16[p + 2] & 0x0F0Fu) | ((s16[p - 2] & 0xC0C0u) >> 2);
        m = ((s16[p + 2] >> 4) & 0x0F0Fu) | ((s16[p] & 0xC0C0u) >> 2);
    }
    float d = half_at(blk), dmin = half_at(blk + 2);
    return half_at(xlo) * (d * (float)((int)(sc & 0xFF) * dlo) - dmin * (float)((int)(m & 0xFF) * slo))
         + half_at(xhi) * (d * (float)((int)(sc >> 8) * dhi) - dmin * (float)((int)(m >> 8) * shi));
}

// Q6_K, 210 bytes per 256 values: 128 bytes of low nibbles, 64 of 2-bit high parts, 16 int8 scales (one per 16
// values), f16 d; value = d * sc * (q - 32). In each half of 128 values, sub-block g (0..3) of 32 takes the low
// (g < 2) or high nibbles of ql[(g & 1) * 32 + l] and bits 2g of qh[l]. Lane j takes sub-blocks g and g + 2 of
// one half from the same bytes of ql and qh.
__device__ __forceinline__ float q6k_super_dot(const uint8_t* __restrict__ blk, const uint8_t* __restrict__ x, int j) {
    const int lanes_per_half = KQ_LANES / 2;
    int part = j / lanes_per_half, k = j % lanes_per_half;
    int g = k % 2;                          // sub-blocks g (low nibbles) and g + 2 (high nibbles) of half part
    int off = (k / 2) * KQ_BYTES;           // this lane's first value in each of the two
    const uint8_t* ql = blk + part * 64 + g * 32 + off;
    const uint8_t* qh = blk + 128 + part * 32 + off;
    const uint8_t* xlo = x + (part * 4 + g) * BLOCK_BYTES;
    const uint8_t* xhi = xlo + 2 * BLOCK_BYTES;
    int dlo = 0, dhi = 0, slo = 0, shi = 0;
#pragma unroll
    for (int i = 0; i < KQ_BYTES; i += 4) {
        uint32_t q = load_u32_a2(ql + i), h = load_u32_a2(qh + i) >> (2 * g);
        uint32_t lo = (q & 0x0F0F0F0Fu) | ((h & 0x03030303u) << 4);
        uint32_t hi = ((q >> 4) & 0x0F0F0F0Fu) | (((h >> 4) & 0x03030303u) << 4);
        int a = load_i8x4(xlo + 2 + off + i), b = load_i8x4(xhi + 2 + off + i);
        dlo = __dp4a((int)lo, a, dlo);
        dhi = __dp4a((int)hi, b, dhi);
        slo = __dp4a(0x01010101, a, slo);
        shi = __dp4a(0x01010101, b, shi);
    }
    const int8_t* sc = (const int8_t*)blk + 192 + part * 8 + 2 * g + off / 16; // KQ_BYTES <= 16: one scale
    float d = half_at(blk + 208);
    return half_at(xlo) * (d * (float)((int)sc[0] * (dlo - 32 * slo)))
         + half_at(xhi) * (d * (float)((int)sc[4] * (dhi - 32 * shi)));
}

template <int T>
__device__ __forceinline__ float k_super_dot(const uint8_t* __restrict__ blk, const uint8_t* __restrict__ x, int j) {
    if (T == GGML_Q6_K) return q6k_super_dot(blk, x, j);
    return k45_super_dot<T == GGML_Q5_K>(blk, x, j);
}

template <int T>
__device__ __forceinline__ constexpr int k_super_bytes() {
    return T == GGML_Q4_K ? 144 : T == GGML_Q5_K ? 176 : 210;
}

// Row dot of a K-quant type T: KQ_LANES lanes per 256-value super-block.
template <int T>
__device__ __forceinline__ float k_row_dot(const uint8_t* __restrict__ w, const uint8_t* __restrict__ x, int blocks) {
    int lane = threadIdx.x & 31;
    float acc = 0.0f;
#pragma unroll 2
    for (int s = lane / KQ_LANES; s < blocks / 8; s += 32 / KQ_LANES) {
        acc += k_super_dot<T>(w + (long long)s * k_super_bytes<T>(), x + (long long)s * 8 * BLOCK_BYTES,
                              lane % KQ_LANES);
    }
    return warp_sum(acc);
}

template <int T>
__device__ __forceinline__ void k_row_dot2(const uint8_t* __restrict__ w0, const uint8_t* __restrict__ w1,
                                           const uint8_t* __restrict__ x, int blocks, float* d0, float* d1) {
    int lane = threadIdx.x & 31;
    float a0 = 0.0f, a1 = 0.0f;
#pragma unroll 2
    for (int s = lane / KQ_LANES; s < blocks / 8; s += 32 / KQ_LANES) {
        long long at = (long long)s * k_super_bytes<T>();
        const uint8_t* xs = x + (long long)s * 8 * BLOCK_BYTES;
        a0 += k_super_dot<T>(w0 + at, xs, lane % KQ_LANES);
        a1 += k_super_dot<T>(w1 + at, xs, lane % KQ_LANES);
    }
    *d0 = warp_sum(a0);
    *d1 = warp_sum(a1);
}

// Bytes of one row of cols values of type t.
__device__ __forceinline__ long long quant_row_bytes(int t, int cols) {
    switch (t) {
        case GGML_Q4_0: return (long long)(cols / 32) * 18;
        case GGML_Q4_K: return (long long)(cols / 256) * 144;
        case GGML_Q5_K: return (long long)(cols / 256) * 176;
        case GGML_Q6_K: return (long long)(cols / 256) * 210;
        default: return (long long)(cols / 32) * BLOCK_BYTES;
    }
}

// row_dot for type T: 4 lanes per 32-value block, 8 blocks (one K-quant super-block) per pass.
template <int T>
__device__ __forceinline__ float qrow_dot(const uint8_t* __restrict__ w, const uint8_t* __restrict__ x, int blocks) {
    int lane = threadIdx.x & 31;
    int quarter = lane & 3;
    float acc = 0.0f;
#pragma unroll 4
    for (int b = lane >> 2; b < blocks; b += 8) {
        acc += qblock_dot<T>(w, b, x + (long long)b * BLOCK_BYTES, quarter);
    }
    return warp_sum(acc);
}

template <int T>
__device__ __forceinline__ void qrow_dot2(const uint8_t* __restrict__ w0, const uint8_t* __restrict__ w1,
                                          const uint8_t* __restrict__ x, int blocks, float* d0, float* d1) {
    int lane = threadIdx.x & 31;
    int quarter = lane & 3;
    float a0 = 0.0f, a1 = 0.0f;
#pragma unroll 2
    for (int b = lane >> 2; b < blocks; b += 8) {
        const uint8_t* xb = x + (long long)b * BLOCK_BYTES;
        a0 += qblock_dot<T>(w0, b, xb, quarter);
        a1 += qblock_dot<T>(w1, b, xb, quarter);
    }
    *d0 = warp_sum(a0);
    *d1 = warp_sum(a1);
}

// R rows w[i] (null: none, its sum left 0; null-ness is the same on every lane) against activations x[i], their
// loads interleaved so that a warp has R rows' weights in flight at once: a decode matvec of a few thousand
// rows waits on memory latency, not bandwidth. Each row's sum is exactly its single-row dot's (the same lanes take
// the same blocks in the same order, the same warp reduction): Q8_0 as row_dot, Q4_0 as qrow_dot, K-quants as
// k_row_dot.
template <int T, int R>
__device__ __forceinline__ void rows_dot(const uint8_t* const (&w)[R], const uint8_t* const (&x)[R], int blocks,
                                         float (&out)[R]) {
    int lane = threadIdx.x & 31;
    float acc[R];
#pragma unroll
    for (int i = 0; i < R; i++) acc[i] = 0.0f;
    if (T == GGML_Q4_K || T == GGML_Q5_K || T == GGML_Q6_K) {
        for (int s = lane / KQ_LANES; s < blocks / 8; s += 32 / KQ_LANES) {
#pragma unroll
            for (int i = 0; i < R; i++) {
                if (w[i] != nullptr) {
                    acc[i] += k_super_dot<T>(w[i] + (long long)s * k_super_bytes<T>(), x[i] + (long long)s * 8 * BLOCK_BYTES,
                                             lane % KQ_LANES);
                }
            }
        }
    } else {
        int quarter = lane & 3;
        for (int b = lane >> 2; b < blocks; b += 8) {
#pragma unroll
            for (int i = 0; i < R; i++) {
                const uint8_t* xb = x[i] + (long long)b * BLOCK_BYTES;
                if (w[i] != nullptr) {
                    acc[i] += T == GGML_Q4_0 ? qblock_dot<GGML_Q4_0>(w[i], b, xb, quarter)
                                             : block_dot(w[i] + (long long)b * BLOCK_BYTES, xb, quarter);
                }
            }
        }
    }
#pragma unroll
    for (int i = 0; i < R; i++) out[i] = warp_sum(acc[i]);
}

// rows_dot for type t (a runtime argument, the same for all R rows).
template <int R>
__device__ __forceinline__ void typed_rows_dot(int t, const uint8_t* const (&w)[R], const uint8_t* const (&x)[R],
                                               int cols, float (&out)[R]) {
    int blocks = cols / QK;
    switch (t) {
        case GGML_Q4_0: rows_dot<GGML_Q4_0, R>(w, x, blocks, out); return;
        case GGML_Q4_K: rows_dot<GGML_Q4_K, R>(w, x, blocks, out); return;
        case GGML_Q5_K: rows_dot<GGML_Q5_K, R>(w, x, blocks, out); return;
        case GGML_Q6_K: rows_dot<GGML_Q6_K, R>(w, x, blocks, out); return;
        default: rows_dot<GGML_Q8_0, R>(w, x, blocks, out); return;
    }
}

// Row r of a matrix of type t with cols columns against the Q8_0 activation x (every lane gets the sum).
// Q8_0 keeps common.cuh's row_dot, whose loads it was tuned with.
__device__ __forceinline__ float typed_row_dot(int t, const uint8_t* __restrict__ w, int r, int cols,
                                               const uint8_t* __restrict__ x) {
    const uint8_t* row = w + (long long)r * quant_row_bytes(t, cols);
    int blocks = cols / QK;
    switch (t) {
        case GGML_Q4_0: return qrow_dot<GGML_Q4_0>(row, x, blocks);
        case GGML_Q4_K: return k_row_dot<GGML_Q4_K>(row, x, blocks);
        case GGML_Q5_K: return k_row_dot<GGML_Q5_K>(row, x, blocks);
        case GGML_Q6_K: return k_row_dot<GGML_Q6_K>(row, x, blocks);
        default: return row_dot(row, x, blocks);
    }
}

// Rows r of two matrices of type t (gate and up of a SwiGLU) against x, their loads interleaved.
__device__ __forceinline__ void typed_row_dot2(int t, const uint8_t* __restrict__ w0, const uint8_t* __restrict__ w1,
                                               int r, int cols, const uint8_t* __restrict__ x, float* d0, float* d1) {
    long long at = (long long)r * quant_row_bytes(t, cols);
    int blocks = cols / QK;
    switch (t) {
        case GGML_Q4_0: qrow_dot2<GGML_Q4_0>(w0 + at, w1 + at, x, blocks, d0, d1); return;
        case GGML_Q4_K: k_row_dot2<GGML_Q4_K>(w0 + at, w1 + at, x, blocks, d0, d1); return;
        case GGML_Q5_K: k_row_dot2<GGML_Q5_K>(w0 + at, w1 + at, x, blocks, d0, d1); return;
        case GGML_Q6_K: k_row_dot2<GGML_Q6_K>(w0 + at, w1 + at, x, blocks, d0, d1); return;
        default: row_dot2(w0 + at, w1 + at, x, blocks, d0, d1); return;
    }
}
