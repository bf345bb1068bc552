package dev.lazarus.kt.tensor;

import dev.lazarus.kt.gguf.GgmlType;

/**
 * The form an activation vector takes before it is multiplied with weights of a given type: ggml's
 * {@code vec_dot_type}. Matching it (rather than dequantizing weights to f32) is what keeps results
 * within rounding of llama.cpp's CPU backend.
 */
public enum VecDotType {
    /** plain f32. */
    F32(1),
    /** f32 rounded to f16 (nearest even). */
    F16(1),
    /** f32 rounded to bf16 (nearest even). */
    BF16(1),
    /** blocks of 32 int8 with an f16 scale: ggml's quantize_row_q8_0. */
    Q8_0(32),
    /** Q8_0 plus each block's f16 d·Σq (for the affine weight types' offset term): ggml's quantize_row_q8_1. */
    Q8_1(32),
    /** blocks of 256 int8 with an f32 scale and 16-value sums: ggml's quantize_row_q8_K. */
    Q8_K(256);

    private final int blockSize;

    VecDotType(int blockSize) {
        this.blockSize = blockSize;
    }

    public int blockSize() {
        return blockSize;
    }

    public static VecDotType of(GgmlType weightType) {
        return switch (weightType) {
            case F32 -> F32;
            case F16 -> F16;
            case BF16 -> BF16;
            case Q8_0, Q4_0, Q5_0, IQ4_NL, MXFP4 -> Q8_0;
            case Q4_1, Q5_1 -> Q8_1;
            case Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M -> Q8_K;
            default -> throw new IllegalArgumentException("no kernels for weight type " + weightType);
        };
    }
}
