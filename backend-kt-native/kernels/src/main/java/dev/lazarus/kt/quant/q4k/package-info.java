/**
 * Q4_K and Q5_K: ggml's blocks read in place, the RAM tier's packed copy, the native 16-row copy, their kernels and the
 * activation orders those kernels read ({@code ACTIVATION_ORDER} of {@link dev.lazarus.kt.quant.q4k.Q4KInt16Kernel}
 * and {@link dev.lazarus.kt.quant.q4k.Q4KInt16InPlaceKernel}). The native kernels' side is {@code lz_q4k16.h} and the
 * Q4_K parts of {@code lz_driver.h} in {@code src/main/c}; the GPU's, {@code src/main/cuda/quants.cuh}.
 */
package dev.lazarus.kt.quant.q4k;
