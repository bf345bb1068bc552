package dev.lazarus.kt.model;

import java.util.Arrays;
import java.util.Locale;

/**
 * The architectures this engine runs. Each is a configuration of the one {@link TransformerBlock}:
 * what differs is data (rope style, how MoE weights are normalised), never forward code.
 */
public enum Architecture {
    /** Dense llama, or Mixtral-style experts when the GGUF has {@code expert_count}. */
    LLAMA("llama", RopeStyle.NORMAL, true),
    QWEN3("qwen3", RopeStyle.NEOX, true),
    QWEN3MOE("qwen3moe", RopeStyle.NEOX, true),
    /** MLA attention, shared experts, sigmoid group routing; normalisation as the GGUF says. */
    DEEPSEEK2("deepseek2", RopeStyle.NORMAL, false);

    private final String ggufName;
    private final RopeStyle ropeStyle;
    private final boolean alwaysNormalizesExpertWeights;

    Architecture(String ggufName, RopeStyle ropeStyle, boolean alwaysNormalizesExpertWeights) {
        this.ggufName = ggufName;
        this.ropeStyle = ropeStyle;
        this.alwaysNormalizesExpertWeights = alwaysNormalizesExpertWeights;
    }

    public String ggufName() {
        return ggufName;
    }

    public RopeStyle ropeStyle() {
        return ropeStyle;
    }

    /** llama.cpp renormalises the top-k softmax weights unconditionally for llama and qwen3moe. */
    boolean alwaysNormalizesExpertWeights() {
        return alwaysNormalizesExpertWeights;
    }

    public static Architecture fromGguf(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        return Arrays.stream(values())
                .filter(a -> a.ggufName.equals(n))
                .findFirst()
                .orElseThrow(() -> new ModelFormatException("unsupported architecture '" + name + "' (supported: "
                        + Arrays.stream(values()).map(Architecture::ggufName).toList() + ")"));
    }
}
