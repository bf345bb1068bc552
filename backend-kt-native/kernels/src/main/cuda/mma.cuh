// Tensor-core tiles of the batched prompt's Q8_0 products (prefill.cu): a block of TC_WARPS warps takes TC_ROWS
// weight rows (16 a warp) of up to two matrices against a tile of up to TC_TOKENS tokens. Both sides are staged in
// shared memory TC_CHUNK 32-value blocks at a time (quants as aligned words, scales as floats); each 32-value block
// of a (row, token) pair gives its exact int32 sum by one int8 mma.sync m16n8k32 per 8 tokens (sm_80 and later;
// older GPUs and the fake driver of the tests take the same sums by dp4a from the same shared memory), which the
// thread holding that pair folds in block order: acc += (float)sum * (dw * dx). That is llama.cpp's MMQ fold per
// 32-value block, not the decode kernels' (row_dot: each lane folds its 8-value quarters of every 8th block and the
// warp adds the 32 partial sums), so the batched prompt's Q8_0 products round differently from decoding the same
// tokens (GpuParityCheck measures the logits' difference to the token path).
#pragma once

#include "common.cuh"

#define TC_WARPS 4
#define TC_ROWS (16 * TC_WARPS)
// Tokens of a tile: ExpertGroups.TILE (the MoE's expert tiles and the dense tiles share it).
#define TC_TOKENS 64
#define TC_CHUNK 4
// Ints per staged row: 8 per block and 4 of padding, so the 8 x 4 threads of a fragment load hit 32 banks.
#define TC_STRIDE (TC_CHUNK * 8 + 4)

// The exact int sums of one 32-value block for this thread's four (row, token) pairs of an m16n8 tile:
// c[i] = row g + 8 * (i >> 1) of the warp's 16 staged weight rows w (a: their fragment) against token 2t + (i & 1)
// of the 8 staged token rows x (both pointing at the block's first word).
__device__ __forceinline__ void block_sums(const int* w, const int a[4], const int* x, int g, int t, int c[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    int b0 = x[g * TC_STRIDE + t], b1 = x[g * TC_STRIDE + 4 + t];
    c[0] = c[1] = c[2] = c[3] = 0;
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
    for (int i = 0; i < 4; i++) {
        const int* wr = w + (g + 8 * (i >> 1)) * TC_STRIDE;
        const int* xr = x + (2 * t + (i & 1)) * TC_STRIDE;
        int s = 0;
        for (int k = 0; k < 8; k++) s = __dp4a(wr[k], xr[k], s);
        c[i] = s;
    }
#endif
}

// The mma's A fragment of the warp's 16 staged rows w at a block: rows g and g + 8, words t and 4 + t (values
// 4t..4t+3 and 16+4t..16+4t+3, the B fragment's values of each token).
__device__ __forceinline__ void a_fragment(const int* w, int g, int t, int a[4]) {
    a[0] = w[g * TC_STRIDE + t];
    a[1] = w[(g + 8) * TC_STRIDE + t];
    a[2] = w[g * TC_STRIDE + 4 + t];
    a[3] = w[(g + 8) * TC_STRIDE + 4 + t];
}

// Rows r0.. (< rows, wStride bytes apart) of M Q8_0 matrices w[m] with `blocks` blocks each, against n <= TC_TOKENS
// Q8_0 activations, the i-th at x + at(i) * xStride (at: idx[i] / div, or i without idx). acc[m][nt][c] gets the
// sum of weight row r0 + 16 * warp + g + 8 * (c >> 1) and token 8 * nt + 2t + (c & 1) (g = lane / 4, t = lane % 4);
// pairs past rows or n hold 0. Every thread of the block calls it (it synchronises the block).
template <int M>
__device__ __forceinline__ void q8_tile(const uint8_t* const* w, int r0, int rows, long long wStride,
                                        const uint8_t* __restrict__ x, long long xStride, const int* __restrict__ idx,
                                        int div, int n, int blocks, float acc[M][TC_TOKENS / 8][4]) {
    __shared__ int sw[M * TC_ROWS * TC_STRIDE];
    __shared__ float swd[M * TC_ROWS * TC_CHUNK];
    __shared__ int sx[TC_TOKENS * TC_STRIDE];
    __shared__ float sxd[TC_TOKENS * TC_CHUNK];
    int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3, warp = threadIdx.x >> 5;
#pragma unroll
    for (int m = 0; m < M; m++) {
#pragma unroll
        for (int nt = 0; nt < TC_TOKENS / 8; nt++) {
#pragma unroll
            for (int c = 0; c < 4; c++) acc[m][nt][c] = 0.0f;
        }
    }
    for (int c0 = 0; c0 < blocks; c0 += TC_CHUNK) {
        int cb = blocks - c0 < TC_CHUNK ? blocks - c0 : TC_CHUNK;
        __syncthreads(); // the previous chunk's reads are done
        for (int e = threadIdx.x; e < M * TC_ROWS * TC_CHUNK * 8; e += blockDim.x) {
            int word = e % 8, b = e / 8 % TC_CHUNK, r = e / (8 * TC_CHUNK) % TC_ROWS, m = e / (8 * TC_CHUNK * TC_ROWS);
            int q = 0;
            float d = 0.0f;
            if (r0 + r < rows && b < cb) {
                const uint8_t* wb = w[m] + (long long)(r0 + r) * wStride + (long long)(c0 + b) * BLOCK_BYTES;
                q = load_i8x4(wb + 2 + 4 * word);
                if (word == 0) d = __half2float(*(const __half*)wb);
            }
            sw[(m * TC_ROWS + r) * TC_STRIDE + b * 8 + word] = q;
            if (word == 0) swd[(m * TC_ROWS + r) * TC_CHUNK + b] = d;
        }
        for (int e = threadIdx.x; e < TC_TOKENS * TC_CHUNK * 8; e += blockDim.x) {
            int word = e % 8, b = e / 8 % TC_CHUNK, i = e / (8 * TC_CHUNK);
            int q = 0;
            float d = 0.0f;
            if (i < n && b < cb) {
                const uint8_t* xb = x + (long long)(idx == nullptr ? i : idx[i] / div) * xStride
                                  + (long long)(c0 + b) * BLOCK_BYTES;
                q = load_i8x4(xb + 2 + 4 * word);
                if (word == 0) d = __half2float(*(const __half*)xb);
            }
            sx[i * TC_STRIDE + b * 8 + word] = q;
            if (word == 0) sxd[i * TC_CHUNK + b] = d;
        }
        __syncthreads();
        for (int b = 0; b < cb; b++) {
            int a[M][4];
            float dw[M][2];
#pragma unroll
            for (int m = 0; m < M; m++) {
                const int* ws = sw + (m * TC_ROWS + 16 * warp) * TC_STRIDE + b * 8;
                a_fragment(ws, g, t, a[m]);
                dw[m][0] = swd[(m * TC_ROWS + 16 * warp + g) * TC_CHUNK + b];
                dw[m][1] = swd[(m * TC_ROWS + 16 * warp + g + 8) * TC_CHUNK + b];
            }
#pragma unroll
            for (int nt = 0; nt < TC_TOKENS / 8; nt++) {
                if (8 * nt >= n) break; // the same for the whole warp
                const int* xs = sx + 8 * nt * TC_STRIDE + b * 8;
                float dx0 = sxd[(8 * nt + 2 * t) * TC_CHUNK + b], dx1 = sxd[(8 * nt + 2 * t + 1) * TC_CHUNK + b];
#pragma unroll
                for (int m = 0; m < M; m++) {
                    int c[4];
                    block_sums(sw + (m * TC_ROWS + 16 * warp) * TC_STRIDE + b * 8, a[m], xs, g, t, c);
                    acc[m][nt][0] += (float)c[0] * (dw[m][0] * dx0);
                    acc[m][nt][1] += (float)c[1] * (dw[m][0] * dx1);
                    acc[m][nt][2] += (float)c[2] * (dw[m][1] * dx0);
                    acc[m][nt][3] += (float)c[3] * (dw[m][1] * dx1);
                }
            }
        }
    }
}

// The weight row and token (within the tile) of acc[.][nt][c] for this thread (see q8_tile).
__device__ __forceinline__ int tile_row(int c) {
    return 16 * (threadIdx.x >> 5) + ((threadIdx.x & 31) >> 2) + 8 * (c >> 1);
}

__device__ __forceinline__ int tile_token(int nt, int c) {
    return 8 * nt + 2 * (threadIdx.x & 3) + (c & 1);
}
