package dev.lazarus.kt.model;

import dev.lazarus.kt.parallel.Parallel;
import java.util.List;

/** The default {@link ExpertExecutor}: every expert read in place from the memory-mapped GGUF on the CPU. */
public final class CpuExperts implements ExpertExecutor {

    private final Parallel parallel;
    private final SwiGlu.Weights[][] byLayer;

    public CpuExperts(Parallel parallel, List<ExpertLayer> layers) {
        this.parallel = parallel;
        int blocks = layers.stream().mapToInt(ExpertLayer::layer).max().orElse(-1) + 1;
        this.byLayer = new SwiGlu.Weights[blocks][];
        for (ExpertLayer l : layers) {
            byLayer[l.layer()] = l.experts().stream().map(ExpertWeights::cpu).toArray(SwiGlu.Weights[]::new);
        }
    }

    @Override
    public float[][][] apply(int layer, int[] experts, float[][][] inputs) {
        return SwiGlu.apply(parallel, nets(layer, experts), inputs);
    }

    /** Every expert's rows as one phase of the forward pass's pool call (no call of its own). */
    @Override
    public SwiGlu.Pass begin(int layer, int[] experts, float[][][] inputs) {
        return SwiGlu.begin(parallel, nets(layer, experts), inputs);
    }

    private SwiGlu.Weights[] nets(int layer, int[] experts) {
        SwiGlu.Weights[] nets = new SwiGlu.Weights[experts.length];
        for (int j = 0; j < experts.length; j++) {
            nets[j] = byLayer[layer][experts[j]];
        }
        return nets;
    }
}
