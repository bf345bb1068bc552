/** F32, F16 and BF16: ggml's float vec_dot orders. */
package dev.lazarus.kt.quant.floats;
