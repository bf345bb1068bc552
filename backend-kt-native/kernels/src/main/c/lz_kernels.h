/*
 * The kernels of kt-native's native library, in one list: the ids the ISA units switch on (through lz_driver.h) and
 * the names lz_grids.c exports (lz_kernel_name), which the Java side compares with NativeKernels.Kernel's names and
 * order at load, so that a library built from other sources (an older build, another order) is refused rather than
 * asked for a kernel id it means otherwise.
 */
#ifndef LZ_KERNELS_H
#define LZ_KERNELS_H

/* X(name) per kernel, in the order of the ids the Java side passes (NativeKernels.Kernel's ordinals). */
#define LZ_KERNEL_LIST(X)                                                                                           \
    X(Q8_0)           /* ggml's vec_dot_q8_0_q8_0: 8 lanes of 4-value dots, fma per block, hsum_float_8 */            \
    X(Q4K_GEMV)       /* llama-server's repacked q4_K GEMV: per super-block fma of the exact sums */                 \
    X(Q4K_GEMM)       /* its repacked GEMM (activation rows in fours): fma per pair of sub-blocks */                 \
    X(Q4K_TILED)      /* the tiled matmul: fma(-dmin, s2, d * s1), then fma(v, d_y, acc) */                          \
    X(Q6K)            /* vec_dot_q6_K_q8_K: 8 lanes, the -32 through 16-value sums, hsum_float_8 */                   \
    X(Q6K_TILED)      /* the tiled matmul: d * s1, then fma(v, d_y, acc) */                                           \
    /* the low-bit types (lz_lowbit.h): SubBlockKQuantKernel's and TableBlockKernel's orders */                      \
    X(Q2K) X(Q2K_GEMV) X(Q2K_GEMM) X(Q2K_TILED) X(Q3K) X(Q3K_TILED)                                                  \
    X(IQ4XS) X(IQ4XS_TILED) X(IQ4NL) X(IQ4NL_REPACKED) X(MXFP4) X(MXFP4_REPACKED)                                   \
    X(Q4K16_GEMV)     /* LZ_Q4K_GEMV's order on the 16-row layout of lz_q4k16.h */                                    \
    X(Q4K16_GEMM)     /* LZ_Q4K_GEMM's order on it */                                                                 \
    /* the grid I-quants (lz_grid.h): SubBlockKQuantKernel's VEC_DOT and TILED orders, in lz_grid.h's type order */  \
    X(IQ2XXS) X(IQ2XXS_TILED) X(IQ2XS) X(IQ2XS_TILED) X(IQ2S) X(IQ2S_TILED)                                          \
    X(IQ3XXS) X(IQ3XXS_TILED) X(IQ3S) X(IQ3S_TILED) X(IQ1S) X(IQ1S_TILED)                                            \
    X(IQ1M) X(IQ1M_TILED)                                                                                             \
    X(Q8_0_16)        /* LZ_Q8_0's order on the 16-row layout of lz_q8016.h */

enum {
#define LZ_KERNEL_ID(name) LZ_##name,
    LZ_KERNEL_LIST(LZ_KERNEL_ID)
#undef LZ_KERNEL_ID
    LZ_KERNELS /* how many there are */
};

#endif
