/**
 * Q6_K: ggml's blocks, the RAM tier's packed copy, their int16 kernels and the activation order they read
 * ({@code ACTIVATION_ORDER} of {@link dev.lazarus.kt.quant.q6k.Q6KInt16Kernel}).
 */
package dev.lazarus.kt.quant.q6k;
