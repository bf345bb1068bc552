package dev.lazarus.kt.model;

/** How RoPE pairs the dimensions it rotates (ggml's rope modes). */
public enum RopeStyle {
    /** Adjacent pairs (x[2i], x[2i+1]): llama, deepseek2. */
    NORMAL,
    /** Halves (x[i], x[i + n/2]): GPT-NeoX, qwen3, qwen3moe. */
    NEOX
}
