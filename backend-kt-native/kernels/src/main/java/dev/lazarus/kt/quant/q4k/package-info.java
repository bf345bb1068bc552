/** Q4_K and Q5_K: ggml's blocks read in place, the RAM tier's packed copy, the native 16-row copy, and their kernels. */
package dev.lazarus.kt.quant.q4k;
