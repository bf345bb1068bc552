/** Q8_0: ggml's blocks, the native 16-row copy, and vec_dot's kernel. */
package dev.lazarus.kt.quant.q8_0;
