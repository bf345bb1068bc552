package dev.lazarus.kt.placement;

import dev.lazarus.kt.model.ExpertLayer;
import dev.lazarus.kt.model.ExpertWeights;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * The routed experts placement works on. Layers are addressed by <em>slot</em>, their position among
 * the MoE blocks (deepseek2's leading dense blocks have none); {@link #layerId} gives the block number.
 */
public final class ExpertCatalog {

    private final List<ExpertLayer> layers;
    private final int expertsPerLayer;
    private final int[] slotOfLayer;
    private final long totalBytes;

    public ExpertCatalog(List<ExpertLayer> layers) {
        this.layers = List.copyOf(layers);
        this.expertsPerLayer = layers.isEmpty() ? 0 : layers.getFirst().experts().size();
        int maxLayer = layers.stream().mapToInt(ExpertLayer::layer).max().orElse(-1);
        this.slotOfLayer = new int[maxLayer + 1];
        java.util.Arrays.fill(slotOfLayer, -1);
        long total = 0;
        for (int s = 0; s < layers.size(); s++) {
            ExpertLayer l = layers.get(s);
            if (l.experts().size() != expertsPerLayer) {
                throw new IllegalArgumentException("layer " + l.layer() + " has " + l.experts().size()
                        + " experts, others " + expertsPerLayer);
            }
            slotOfLayer[l.layer()] = s;
            total += l.bytes();
        }
        this.totalBytes = total;
    }

    public int layerCount() {
        return layers.size();
    }

    public int expertsPerLayer() {
        return expertsPerLayer;
    }

    public int layerId(int slot) {
        return layers.get(slot).layer();
    }

    /** The slot of block {@code layer}; throws when the block has no routed experts. */
    public int slotOf(int layer) {
        int s = layer < slotOfLayer.length ? slotOfLayer[layer] : -1;
        if (s < 0) {
            throw new IllegalArgumentException("block " + layer + " has no routed experts");
        }
        return s;
    }

    public ExpertWeights weights(int slot, int expert) {
        return layers.get(slot).experts().get(expert);
    }

    public long expertBytes(int slot, int expert) {
        return weights(slot, expert).bytes();
    }

    /** All experts' weight bytes as stored in the file. */
    public long totalBytes() {
        return totalBytes;
    }

    /** All experts' bytes in a tier that holds each in {@code size} bytes. */
    public long totalBytes(ToLongFunction<ExpertWeights> size) {
        long total = 0;
        for (ExpertLayer l : layers) {
            for (ExpertWeights w : l.experts()) {
                total += size.applyAsLong(w);
            }
        }
        return total;
    }

    public int size() {
        return layers.size() * expertsPerLayer;
    }
}
