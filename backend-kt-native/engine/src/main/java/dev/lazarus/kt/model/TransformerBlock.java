package dev.lazarus.kt.model;

import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.parallel.PhasedBody;

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
    /**
     * The normalized vectors, borrowed for the block's attention half and then its feed-forward half: one slot for every
     * block, which run one after the other, so a prompt's vectors are kept for the next block and prompt.
     */
    private static final Scratch.Slot SCRATCH = Scratch.Slot.retaining(Scratch.RETAINED_BYTES);

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

    /**
     * The block over the residual stream {@code x} (one vector per batch token, updated in place) as phases of the
     * forward pass's one pool call: attention's phases, then the feed-forward's, then one without indices that adds
     * the feed-forward's output. The norms and residual adds run where the phases open.
     *
     * <p>With {@code outputs} (ascending token indices; null: every token), the feed-forward half runs only for
     * those tokens, whose vectors {@link Step#kept()} returns: the last block, where llama.cpp keeps only the rows
     * whose logits are wanted once attention has written every token's keys and values ({@code inp_out_ids}).
     * Besides saving the work, this is what keeps the rounding identical: the FFN then sees as many rows as
     * llama.cpp's, so its matrices pick the same kernels (a repacked Q4_K's GEMV rather than its four-row GEMM for
     * the last prompt token, the vec_dot rather than the tiled matmul of 8+ rows for the other K-quants).
     */
    Step step(ForwardBatch batch, float[][] ropeTables, float[][] x, int[] outputs) {
        return new Step(batch, ropeTables, x, outputs);
    }

    /** One block's work within a forward pass. */
    final class Step implements PhasedBody {

        private final ForwardBatch batch;
        private final float[][] ropeTables;
        private final float[][] x;
        private final int[] outputs;
        private final int attentionPhases = attention.phases();
        private final int ffnPhases = ffn.phases();
        private Scratch s;
        private PhasedStep attending, feeding;
        private float[][] kept;

        private Step(ForwardBatch batch, float[][] ropeTables, float[][] x, int[] outputs) {
            this.batch = batch;
            this.ropeTables = ropeTables;
            this.x = x;
            this.outputs = outputs;
        }

        /** Attention's phases, the feed-forward's, and the last one that adds its output. */
        int phases() {
            return attentionPhases + ffnPhases + 1;
        }

        /** The vectors the feed-forward half updated (all of {@code x}, or the outputs' rows); valid once done. */
        float[][] kept() {
            return kept;
        }

        @Override
        public int open(int phase) {
            if (phase == 0) {
                s = SCRATCH.take();
                attending = attention.begin(batch, ropeTables, normalized(x, attentionNorm, s));
            }
            if (phase < attentionPhases) {
                return attending.open(phase);
            }
            if (phase == attentionPhases) {
                addInPlace(x, attending.finish());
                SCRATCH.give(s);
                kept = keptRows();
                s = SCRATCH.take();
                feeding = kept.length > 0 ? ffn.begin(normalized(kept, ffnNorm, s)) : null;
            }
            if (phase < attentionPhases + ffnPhases) {
                return feeding != null ? feeding.open(phase - attentionPhases) : 0;
            }
            if (feeding != null) {
                addInPlace(kept, feeding.finish());
            }
            SCRATCH.give(s);
            return 0;
        }

        @Override
        public void run(int phase, int from, int to) {
            if (phase < attentionPhases) {
                attending.run(phase, from, to);
            } else {
                feeding.run(phase - attentionPhases, from, to);
            }
        }

        @Override
        public int grain(int phase) {
            return phase < attentionPhases ? attending.grain(phase) : feeding.grain(phase - attentionPhases);
        }

        private float[][] keptRows() {
            if (outputs == null) {
                return x;
            }
            float[][] rows = new float[outputs.length][];
            for (int j = 0; j < outputs.length; j++) {
                rows[j] = x[outputs[j]];
            }
            return rows;
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
