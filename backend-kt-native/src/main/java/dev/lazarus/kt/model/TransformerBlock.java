package dev.lazarus.kt.model;

import dev.lazarus.kt.parallel.Parallel;

/**
 * The one pre-norm transformer block every architecture is built from:
 * {@code x += attention(rmsnorm(x)); x += ffn(rmsnorm(x))}. Which attention (grouped-query or
 * latent) and which FFN (dense or experts) is decided at load time from the GGUF.
 */
final class TransformerBlock {

    private final float[] attentionNorm;
    private final Attention attention;
    private final float[] ffnNorm;
    private final FeedForward ffn;
    private final float eps;
    private final Parallel parallel;
    /** The normalized vectors, borrowed for the block's attention half and then its feed-forward half. */
    private final Scratch.Slot scratch = new Scratch.Slot();

    TransformerBlock(float[] attentionNorm, Attention attention, float[] ffnNorm, FeedForward ffn, float eps,
                     Parallel parallel) {
        this.parallel = parallel;
        this.attentionNorm = attentionNorm;
        this.attention = attention;
        this.ffnNorm = ffnNorm;
        this.ffn = ffn;
        this.eps = eps;
    }

    Attention attention() {
        return attention;
    }

    /** Updates the residual stream {@code x} (one vector per batch token) in place. */
    void forward(ForwardBatch batch, float[][] ropeTables, float[][] x) {
        attend(batch, ropeTables, x);
        feedForward(x);
    }

    /**
     * As {@link #forward}, but the feed-forward half only for the tokens at {@code outputs} (ascending), whose
     * vectors it returns: the last block, where llama.cpp keeps only the rows whose logits are wanted once
     * attention has written every token's keys and values ({@code inp_out_ids}). Besides saving the work, this
     * is what keeps the rounding identical: the FFN then sees as many rows as llama.cpp's, so its matrices pick
     * the same kernels (a repacked Q4_K's GEMV rather than its four-row GEMM for the last prompt token, the
     * vec_dot rather than the tiled matmul of 8+ rows for the other K-quants).
     */
    float[][] forwardOutputs(ForwardBatch batch, float[][] ropeTables, float[][] x, int[] outputs) {
        attend(batch, ropeTables, x);
        float[][] kept = new float[outputs.length][];
        for (int j = 0; j < outputs.length; j++) {
            kept[j] = x[outputs[j]];
        }
        if (kept.length > 0) {
            feedForward(kept);
        }
        return kept;
    }

    private void attend(ForwardBatch batch, float[][] ropeTables, float[][] x) {
        Scratch s = scratch.take();
        try {
            float[][] attended = attention.forward(batch, ropeTables, normalized(x, attentionNorm, s));
            addInPlace(x, attended);
        } finally {
            scratch.give(s);
        }
    }

    private void feedForward(float[][] x) {
        Scratch s = scratch.take();
        try {
            float[][] ff = ffn.forward(normalized(x, ffnNorm, s));
            addInPlace(x, ff);
        } finally {
            scratch.give(s);
        }
    }

    /** rmsnorm(x) · weight, in vectors of {@code s} (attention and FFN read them only until they return). */
    private float[][] normalized(float[][] x, float[] weight, Scratch s) {
        float[][] out = new float[x.length][];
        for (int i = 0; i < x.length; i++) {
            out[i] = s.floats(x[i].length);
        }
        // each token's norm is computed as before, only by whichever thread takes it
        parallel.forTokens(x.length, (from, to) -> {
            for (int i = from; i < to; i++) {
                Numerics.rmsNorm(x[i], 0, x[i].length, weight, eps, out[i], 0);
            }
        });
        return out;
    }

    /** {@code x[i] += y[i]} for every token. */
    private void addInPlace(float[][] x, float[][] y) {
        parallel.forTokens(x.length, (from, to) -> {
            for (int i = from; i < to; i++) {
                Numerics.addInPlace(x[i], y[i]);
            }
        });
    }
}
