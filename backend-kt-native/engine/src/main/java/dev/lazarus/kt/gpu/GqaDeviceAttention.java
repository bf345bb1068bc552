package dev.lazarus.kt.gpu;

import dev.lazarus.kt.model.BlockTensors;
import dev.lazarus.kt.model.ModelConfig;
import dev.lazarus.kt.model.ModelTensors;
import dev.lazarus.kt.model.RopeStyle;
import java.util.ArrayList;
import java.util.List;

/**
 * Grouped-query attention on the GPU (llama, qwen3, qwen3moe; the CPU's GroupedQueryAttention): the q, k and v
 * projections in one launch, QK-norm and rope with the K/V store, attention over the F16 device cache, the
 * output projection added to the residual. Q8_0, F16 or F32 projections.
 */
final class GqaDeviceAttention implements DeviceAttention {

    record Weights(DeviceMatrix q, DeviceMatrix k, DeviceMatrix v, DeviceMatrix output, long qNorm, long kNorm) {}

    private final LayerKernels kernels;
    private final LayerKernels.Heads heads;
    private final List<Weights> blocks = new ArrayList<>();
    private final int attWidth;
    private final float scale;
    private final long dQkv, dAtt, dAttQ;

    GqaDeviceAttention(ModelConfig c, ModelTensors tensors, DeviceWeights w, LayerKernels kernels, Scratch scratch) {
        this.kernels = kernels;
        this.heads = new LayerKernels.Heads(c.headCount(), c.headCountKv(), c.keyLength(), c.valueLength(),
                c.rope().dimensions(), c.rope().style() == RopeStyle.NEOX, c.rmsEps());
        for (BlockTensors block : tensors.blocks()) {
            BlockTensors.Gqa a = (BlockTensors.Gqa) block.attention();
            blocks.add(new Weights(w.matrix(a.q()), w.matrix(a.k()), w.matrix(a.v()), w.matrix(a.output()),
                    w.optionalVector(a.qNorm()), w.optionalVector(a.kNorm())));
        }
        this.attWidth = c.headCount() * c.valueLength();
        this.scale = 1.0f / (float) Math.sqrt(c.keyLength());
        this.dQkv = scratch.allocate(heads.qkvWidth());
        this.dAtt = scratch.allocate(attWidth);
        this.dAttQ = scratch.allocate(GpuLayerPath.q8Floats(attWidth));
    }

    /** Block {@code b}'s projections and QK-norm weights (the batched prompt path launches its own kernels on them). */
    Weights weights(int b) {
        return blocks.get(b);
    }

    /** The heads' shape. */
    LayerKernels.Heads shape() {
        return heads;
    }

    float scale() {
        return scale;
    }

    /** Why a block's attention {@code a} cannot run here, or null. */
    static String unsupported(BlockTensors.Gqa a) {
        return DeviceWeights.requireOneType("the GPU attention", a.q(), a.k(), a.v(), a.output());
    }

    @Override
    public int keyWidth() {
        return heads.kvHeads() * heads.headDim();
    }

    @Override
    public int valueWidth() {
        return heads.kvHeads() * heads.valueDim();
    }

    @Override
    public int heads() {
        return heads.heads();
    }

    @Override
    public void forward(int b, long xn, long xq, long x, DeviceKvCaches.Copy copy, long kvOut, long rope, long pos,
                        long scores, int scoreStride) {
        Weights w = blocks.get(b);
        kernels.qkv(w.q(), w.k(), w.v(), xn, xq, dQkv);
        kernels.qkNormRopeStore(dQkv, w.qNorm(), w.kNorm(), rope, copy.keys(b), copy.values(b), kvOut, heads, pos);
        boolean quantized = LayerKernels.quantized(w.output().type());
        boolean fused = quantized && LayerKernels.quantizesOutput(heads); // the attention quantizes its own output
        kernels.attention(dQkv, copy.keys(b), copy.values(b), valueWidth(), scores, scoreStride, dAtt,
                fused ? dAttQ : 0, heads, pos, scale);
        if (quantized && !fused) {
            kernels.quantize(dAtt, dAttQ, attWidth);
        }
        kernels.matvec(w.output(), dAtt, dAttQ, x, 1f, true);
    }
}
