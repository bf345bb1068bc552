package dev.lazarus.kt.model;

import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.tensor.WeightMatrix;

/**
 * deepseek32's (and glm-dsa's) lightning indexer (DeepSeek Sparse Attention), computed as llama.cpp's graph and CPU
 * ops compute it.
 * Per block it caches one key per position beside the latent ({@link #keyDim} more floats in the block's cache row,
 * so prompt reuse and resumed streams carry it with the rest); per query it scores every cached position and the
 * latent attention keeps only the {@code top_k} best ({@link #select}), as llama.cpp masks the others to -inf.
 *
 * <ul>
 *   <li>query heads: {@code attn_q_b} of the normalised compressed query; key: {@code attn_k} of the block input,
 *       layer-normed (weight and bias; eps 1e-6 for deepseek32, 0 for glm-dsa);</li>
 *   <li>both rotated over their first {@code rope.dimension_count} values (deepseek32: NeoX pairing beside the
 *       latent attention's normal one; glm-dsa: normal), then Walsh-Hadamard transformed; the key is cached as F16;</li>
 *   <li>score of position t: the sum over heads, in order, of {@code max(q_h · k_t, 0) · w_h} where
 *       {@code w = proj · x / sqrt(key_length · heads)} (ggml's fused lightning_indexer op, {@code ggml_vec_dot_f32}
 *       products);</li>
 *   <li>selection: ggml's top_k ({@link GgmlTopK}); a query with no more positions than top_k attends them all.</li>
 * </ul>
 */
final class LightningIndexer {

    record Weights(WeightMatrix queryUp, WeightMatrix key, float[] keyNorm, float[] keyNormBias,
                   WeightMatrix headWeights) {}

    private final MlaConfig.Indexer sizes;
    private final Weights weights;
    private final Rope rope;
    private final RopeStyle ropeStyle;
    private final float normEps;
    private final Parallel parallel;
    private final float weightScale;

    /** {@code ropeStyle} and {@code normEps}: the architecture's ({@link Architecture#indexerRopeStyle}). */
    LightningIndexer(MlaConfig.Indexer sizes, Weights weights, Rope rope, RopeStyle ropeStyle, float normEps,
                     Parallel parallel) {
        this.sizes = sizes;
        this.weights = weights;
        this.rope = rope;
        this.ropeStyle = ropeStyle;
        this.normEps = normEps;
        this.parallel = parallel;
        this.weightScale = 1.0f / (float) Math.sqrt((float) (sizes.keyDim() * sizes.heads()));
    }

    /** Floats the indexer adds to each position's cache row. */
    int keyDim() {
        return sizes.keyDim();
    }

    /** The batch's indexer keys, as the cache stores them (before the F16 rounding the cache applies). */
    float[][] keys(float[][] xn, float[][] ropeTables) {
        float[][] k = Projections.apply(parallel, weights.key(), xn);
        int d = sizes.keyDim();
        for (int i = 0; i < k.length; i++) {
            Numerics.layerNorm(k[i], 0, d, weights.keyNorm(), weights.keyNormBias(), normEps, k[i], 0);
            rope.rotate(k[i], 0, ropeTables[i], ropeStyle);
            Numerics.hadamard(k[i], 0, d);
        }
        return k;
    }

    /**
     * For each token of the batch, whose indexer keys are already in its cache at {@code keyOffset} of each
     * {@code rowWidth}-float row of {@code block}: the positions {@code [0, position]} it attends, or null for all.
     *
     * @param qr the normalised compressed queries ({@code attn_q_a_norm}'s output)
     * @param xn the normalised block inputs
     */
    boolean[][] select(ForwardBatch batch, int block, int keyOffset, int rowWidth, float[][] qr, float[][] xn,
                       float[][] ropeTables) {
        int n = batch.size();
        int d = sizes.keyDim();
        int heads = sizes.heads();
        float[][] q = Projections.apply(parallel, weights.queryUp(), qr);
        float[][] w = Projections.apply(parallel, weights.headWeights(), xn);
        boolean[][] keep = new boolean[n][];
        parallel.forRange(n, (from, to) -> {
            for (int i = from; i < to; i++) {
                int positions = batch.positions()[i] + 1;
                if (positions <= sizes.topK()) {
                    continue;
                }
                for (int h = 0; h < heads; h++) {
                    rope.rotate(q[i], h * d, ropeTables[i], ropeStyle);
                    Numerics.hadamard(q[i], h * d, d);
                    w[i][h] *= weightScale;
                }
                short[] keys = batch.caches()[i].keys(block);
                float[] scores = new float[positions];
                float[] key = new float[d];
                for (int t = 0; t < positions; t++) {
                    for (int c = 0; c < d; c++) {
                        key[c] = Float.float16ToFloat(keys[t * rowWidth + keyOffset + c]);
                    }
                    float score = 0f;
                    for (int h = 0; h < heads; h++) {
                        float qk = Numerics.dotF32(q[i], h * d, key, 0, d);
                        score += Math.max(qk, 0f) * w[i][h];
                    }
                    scores[t] = score;
                }
                keep[i] = GgmlTopK.select(scores, positions, sizes.topK());
            }
        });
        return keep;
    }
}
