package dev.lazarus.kt.model;

import java.util.List;

/** The routed experts of one MoE block, indexed by expert id, as the GGUF stores them. */
public record ExpertLayer(int layer, List<ExpertWeights> experts) {

    public ExpertLayer {
        experts = List.copyOf(experts);
    }

    public long bytes() {
        return experts.stream().mapToLong(ExpertWeights::bytes).sum();
    }
}
