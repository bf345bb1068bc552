package dev.lazarus.kt.synthetic;

import java.util.Arrays;

/** What the synthetic generator must know about each llama.cpp architecture it writes. */
public enum Architecture {
    /** Dense Llama, or Mixtral when given experts. Normal (non-NEOX) RoPE. */
    LLAMA("llama", false, false, true, false),
    /** Dense Qwen3: per-head RMS norm of Q and K before RoPE. */
    QWEN3("qwen3", true, false, false, false),
    /** Qwen3 with softmax-routed experts in every layer. */
    QWEN3MOE("qwen3moe", true, false, true, true),
    /** DeepSeek V2/V3: multi-head latent attention, shared expert, leading dense layers. */
    DEEPSEEK2("deepseek2", false, true, true, true);

    private final String ggufName;
    private final boolean qkNorm;
    private final boolean mla;
    private final boolean allowsMoe;
    private final boolean requiresMoe;

    Architecture(String ggufName, boolean qkNorm, boolean mla, boolean allowsMoe, boolean requiresMoe) {
        this.ggufName = ggufName;
        this.qkNorm = qkNorm;
        this.mla = mla;
        this.allowsMoe = allowsMoe;
        this.requiresMoe = requiresMoe;
    }

    /** {@code general.architecture}, also the prefix of the architecture's metadata keys. */
    public String ggufName() {
        return ggufName;
    }

    public boolean qkNorm() {
        return qkNorm;
    }

    public boolean mla() {
        return mla;
    }

    public boolean allowsMoe() {
        return allowsMoe;
    }

    public boolean requiresMoe() {
        return requiresMoe;
    }

    public static Architecture of(String ggufName) {
        return Arrays.stream(values()).filter(a -> a.ggufName.equals(ggufName)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unsupported architecture '" + ggufName
                        + "' (llama, qwen3, qwen3moe, deepseek2)"));
    }
}
