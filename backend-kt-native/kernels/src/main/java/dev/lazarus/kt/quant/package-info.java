/**
 * One package per weight type, each holding what the type needs together: its block layouts (ggml's, and the copies
 * made at load), its Java kernels and the activation orders they read. Q4_K and Q5_K: {@code q4k} (Q5_K is Q4_K's
 * block plus a plane of fifth bits, one kernel for both); Q6_K: {@code q6k}; Q8_0: {@code q8_0}; Q4_0, Q4_1, Q5_0,
 * Q5_1: {@code legacy}; Q2_K, Q3_K, IQ4_XS, IQ4_NL, MXFP4 and the grid I-quants: {@code lowbit}; F32, F16, BF16:
 * {@code floats}. What every kernel reads is in {@code dev.lazarus.kt.tensor}; which kernel a matrix takes is decided
 * in {@code dev.lazarus.kt.matrix}. The native (C) kernels of a type are ids of {@code NativeKernels.Kernel}.
 */
package dev.lazarus.kt.quant;
