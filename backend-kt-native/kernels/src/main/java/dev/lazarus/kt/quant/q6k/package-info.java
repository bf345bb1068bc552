/** Q6_K: ggml's blocks, the RAM tier's packed copy, and their int16 kernels. */
package dev.lazarus.kt.quant.q6k;
