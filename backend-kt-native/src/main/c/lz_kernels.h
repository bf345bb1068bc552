/*
 * The kernel ids of kt-native's native kernels, shared by the ISA units (through lz_driver.h) and lz_grids.c, which
 * exports their count (lz_kernel_count): the Java side refuses a library whose count is not its own, an older build
 * that would not know a new id.
 */
#ifndef LZ_KERNELS_H
#define LZ_KERNELS_H

/* The kernels, by the id the Java side passes (NativeKernels.Kernel's ordinals). */
enum {
    LZ_Q8_0 = 0,       /* ggml's vec_dot_q8_0_q8_0: 8 lanes of 4-value dots, fma per block, hsum_float_8 */
    LZ_Q4K_GEMV = 1,   /* llama-server's repacked q4_K GEMV: per super-block fma of the exact sums */
    LZ_Q4K_GEMM = 2,   /* its repacked GEMM (activation rows in fours): fma per pair of sub-blocks */
    LZ_Q4K_TILED = 3,  /* the tiled matmul: fma(-dmin, s2, d * s1), then fma(v, d_y, acc) */
    LZ_Q6K = 4,        /* vec_dot_q6_K_q8_K: 8 lanes, the -32 through 16-value sums, hsum_float_8 */
    LZ_Q6K_TILED = 5,  /* the tiled matmul: d * s1, then fma(v, d_y, acc) */
    /* the low-bit types (lz_lowbit.h): SubBlockKQuantKernel's and TableBlockKernel's orders */
    LZ_Q2K = 6, LZ_Q2K_GEMV = 7, LZ_Q2K_GEMM = 8, LZ_Q2K_TILED = 9, LZ_Q3K = 10, LZ_Q3K_TILED = 11,
    LZ_IQ4XS = 12, LZ_IQ4XS_TILED = 13, LZ_IQ4NL = 14, LZ_IQ4NL_REPACKED = 15, LZ_MXFP4 = 16, LZ_MXFP4_REPACKED = 17,
    LZ_Q4K16_GEMV = 18, /* LZ_Q4K_GEMV's order on the 16-row layout of lz_q4k16.h */
    LZ_Q4K16_GEMM = 19, /* LZ_Q4K_GEMM's order on it */
    /* the grid I-quants (lz_grid.h): SubBlockKQuantKernel's VEC_DOT and TILED orders, in lz_grid.h's type order */
    LZ_IQ2XXS = 20, LZ_IQ2XXS_TILED = 21, LZ_IQ2XS = 22, LZ_IQ2XS_TILED = 23, LZ_IQ2S = 24, LZ_IQ2S_TILED = 25,
    LZ_IQ3XXS = 26, LZ_IQ3XXS_TILED = 27, LZ_IQ3S = 28, LZ_IQ3S_TILED = 29, LZ_IQ1S = 30, LZ_IQ1S_TILED = 31,
    LZ_IQ1M = 32, LZ_IQ1M_TILED = 33,
    LZ_Q8016 = 34,      /* LZ_Q8_0's order on the 16-row layout of lz_q8016.h */
    LZ_KERNELS          /* how many there are: lz_kernel_count, which the Java side checks at load */
};

#endif
