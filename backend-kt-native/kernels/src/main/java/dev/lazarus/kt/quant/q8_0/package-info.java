/**
 * Q8_0: ggml's blocks, the native 16-row copy, vec_dot's kernel and the activation order it reads
 * ({@code ACTIVATION_ORDER} of {@link dev.lazarus.kt.quant.q8_0.Q8_0Kernel}).
 */
package dev.lazarus.kt.quant.q8_0;
