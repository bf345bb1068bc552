/** Q4_0, Q4_1, Q5_0 and Q5_1: ggml's vec_dot orders and q4_0_8x8's repacked one. */
package dev.lazarus.kt.quant.legacy;
