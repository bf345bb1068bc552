package dev.lazarus.kt.model;

import dev.lazarus.kt.tensor.Parallel;
import dev.lazarus.kt.tensor.WeightMatrix;

/**
 * Multi-head attention with grouped key/value heads (llama, qwen3, qwen3moe), optionally with
 * per-head RMS norms on queries and keys before rope (qwen3's QK-norm).
 */
final class GroupedQueryAttention implements Attention {

    private final int block;
    private final int heads;
    private final int kvHeads;
    private final int headDim;
    private final int valueDim;
    private final WeightMatrix[] qkv;
    private final WeightMatrix output;
    private final float[] qNorm;
    private final float[] kNorm;
    private final float eps;
    private final Rope rope;
    private final float scale;
    private final Parallel parallel;

    GroupedQueryAttention(int block, ModelConfig config, WeightMatrix wq, WeightMatrix wk, WeightMatrix wv,
                          WeightMatrix output, float[] qNorm, float[] kNorm, Rope rope, Parallel parallel) {
        this.block = block;
        this.heads = config.headCount();
        this.kvHeads = config.headCountKv();
        this.headDim = config.keyLength();
        this.valueDim = config.valueLength();
        this.qkv = new WeightMatrix[] {wq, wk, wv};
        this.output = output;
        this.qNorm = qNorm;
        this.kNorm = kNorm;
        this.eps = config.rmsEps();
        this.rope = rope;
        this.scale = 1.0f / (float) Math.sqrt(headDim);
        this.parallel = parallel;
    }

    @Override
    public int keyWidth() {
        return kvHeads * headDim;
    }

    @Override
    public int valueWidth() {
        return kvHeads * valueDim;
    }

    @Override
    public float[][] forward(ForwardBatch batch, float[][] ropeTables, float[][] xn) {
        int n = batch.size();
        float[][][] p = Projections.applyAll(parallel, qkv, xn);
        float[][] q = p[0];
        float[][] k = p[1];
        float[][] v = p[2];
        for (int i = 0; i < n; i++) {
            normalizeHeads(q[i], heads, qNorm);
            normalizeHeads(k[i], kvHeads, kNorm);
            rope.apply(q[i], 0, heads, headDim, ropeTables[i]);
            rope.apply(k[i], 0, kvHeads, headDim, ropeTables[i]);
            batch.caches()[i].store(block, batch.positions()[i], k[i], 0, v[i], 0);
        }
        float[][] attended = new float[n][heads * valueDim];
        int group = heads / kvHeads;
        parallel.forRange(n * heads, (from, to) -> {
            for (int task = from; task < to; task++) {
                int i = task / heads;
                int h = task % heads;
                KvCache cache = batch.caches()[i];
                int kvh = h / group;
                AttentionKernel.attend(q[i], h * headDim, headDim,
                        cache.keys(block), kvh * headDim, keyWidth(),
                        cache.values(block), kvh * valueDim, valueWidth(), valueDim,
                        batch.positions()[i] + 1, scale, attended[i], h * valueDim);
            }
        });
        return Projections.apply(parallel, output, attended);
    }

    private void normalizeHeads(float[] x, int count, float[] weight) {
        if (weight == null) {
            return;
        }
        for (int h = 0; h < count; h++) {
            Numerics.rmsNorm(x, h * headDim, headDim, weight, eps, x, h * headDim);
        }
    }
}
