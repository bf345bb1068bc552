package dev.lazarus.kt.model;

import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.parallel.PhaseChain;
import dev.lazarus.kt.tensor.GgmlOrders;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.util.List;

/**
 * A NextN (multi-token prediction) block as llama.cpp's {@code draft-mtp} runs it: the token's embedding and the
 * hidden state that predicted it, each RMS-normed ({@code enorm}, {@code hnorm}), concatenated and projected
 * ({@code eh_proj}); then an ordinary transformer block over its own KV cache; then {@code shared_head_norm} and the
 * output head. The normed result is also the hidden state the next draft step pairs with the drafted token.
 */
public final class MtpBlock {

    private final TransformerBlock block;
    private final int index;
    private final WeightMatrix embedding;
    private final float[] embeddingNorm;
    private final float[] hiddenNorm;
    private final WeightMatrix projection;
    private final float[] headNorm;
    private final WeightMatrix head;
    private final Rope rope;
    private final float eps;
    private final int dim;
    private final Parallel parallel;
    private final KvLayout layout;
    private final GgmlOrders orders;

    MtpBlock(TransformerBlock block, int index, WeightMatrix embedding, float[] embeddingNorm, float[] hiddenNorm,
             WeightMatrix projection, float[] headNorm, WeightMatrix head, Rope rope, float eps, int dim,
             Parallel parallel, GgmlOrders orders) {
        this.block = block;
        this.index = index;
        this.embedding = embedding;
        this.embeddingNorm = embeddingNorm;
        this.hiddenNorm = hiddenNorm;
        this.projection = projection;
        this.headNorm = headNorm;
        this.head = head;
        this.rope = rope;
        this.eps = eps;
        this.dim = dim;
        this.parallel = parallel;
        this.orders = orders;
        // the block keeps its index (its attention addresses the cache by it); the model's own blocks hold no rows here
        int[] keys = new int[index + 1];
        int[] values = new int[index + 1];
        keys[index] = block.attention().keyWidth();
        values[index] = block.attention().valueWidth();
        this.layout = new KvLayout(keys, values);
    }

    /** A cache for the block's keys and values of one sequence. */
    public KvCache newCache(int maxPositions) {
        return new KvCache(layout, KvCacheTypes.F16, maxPositions, orders);
    }

    /** The block's output for each token: its logits where wanted (else null) and its normed hidden state. */
    public record Output(float[][] logits, float[][] hidden) {
    }

    /**
     * Runs tokens {@code tokens[i]} at {@code positions[i]} of {@code cache}, each paired with {@code hidden[i]} (the
     * hidden state of the position before it), writing their keys and values.
     */
    public Output step(int[] tokens, float[][] hidden, int[] positions, KvCache cache, boolean[] wantLogits) {
        int n = tokens.length;
        float[][] tables = new float[n][];
        KvCache[] caches = new KvCache[n];
        float[] e = new float[dim];
        float[] both = new float[2 * dim];
        float[][] concatenated = new float[n][];
        for (int i = 0; i < n; i++) {
            embedding.dequantizeRow(tokens[i], e, 0);
            Numerics.rmsNorm(e, 0, dim, embeddingNorm, eps, both, 0);
            Numerics.rmsNorm(hidden[i], 0, dim, hiddenNorm, eps, both, dim);
            concatenated[i] = both.clone();
            tables[i] = rope.table(positions[i]);
            caches[i] = cache;
        }
        float[][] x = Projections.apply(parallel, projection, concatenated); // the block's residual stream
        cache.ensureCapacity(positions[n - 1] + 1);
        ForwardBatch batch = new ForwardBatch(tokens, positions, caches, wantLogits);
        TransformerBlock.Step step = block.step(batch, tables, x, null);
        new PhaseChain(List.of(new PhaseChain.Part(step.phases(), step))).run(parallel);
        cache.setLength(Math.max(cache.length(), positions[n - 1] + 1));
        float[][] normed = new float[n][dim];
        for (int i = 0; i < n; i++) {
            Numerics.rmsNorm(x[i], 0, dim, headNorm, eps, normed[i], 0);
        }
        float[][] logits = new float[n][];
        int wanted = 0;
        for (boolean w : wantLogits) {
            wanted += w ? 1 : 0;
        }
        float[][] rows = new float[wanted][];
        for (int i = 0, j = 0; i < n; i++) {
            if (wantLogits[i]) {
                rows[j++] = normed[i];
            }
        }
        float[][] computed = wanted == 0 ? new float[0][] : Projections.apply(parallel, head, rows);
        for (int i = 0, j = 0; i < n; i++) {
            if (wantLogits[i]) {
                logits[i] = computed[j++];
            }
        }
        return new Output(logits, normed);
    }

    /** The block's index in the file ({@code blk.N.nextn.*}). */
    public int index() {
        return index;
    }
}
