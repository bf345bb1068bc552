package dev.lazarus.kt.synthetic;

import dev.lazarus.kt.synthetic.SyntheticModels.Moe;

import java.util.SplittableRandom;
import java.util.function.UnaryOperator;

/**
 * Skewed routing for random-weight MoE models. A router logit is the dot product of an expert's router row
 * with the normed activation; with random rows these logits are roughly independent Gaussians whose spread is
 * proportional to the row's scale. Scaling expert {@code e}'s row by {@code rank(e)^-skew} therefore makes
 * the experts of large rows win the top-k far more often (their logits reach the top whenever they are
 * positive), while every expert still wins sometimes. The ranks are a per-layer shuffle, so each layer has
 * its own hot experts, as in trained models. Skew 0.8 with 64 experts, 8 used: the top 10 % of experts take
 * about 30 % of the routed tokens in a simulation of independent Gaussian logits, 36-37 % as measured by
 * GpuDecodeBenchmark on benchQwen3MoeSkewed (consecutive tokens' activations are not independent).
 */
final class RouterSkew {

    private RouterSkew() {
    }

    /** Scales the rows of layer {@code layer}'s router ({@code experts} rows of {@code dim} values). */
    static UnaryOperator<float[]> of(Moe moe, long seed, int layer, int dim) {
        float[] scale = scales(moe.experts(), moe.routingSkew(), new SplittableRandom(seed * 31 + layer));
        return values -> {
            for (int e = 0; e < scale.length; e++) {
                for (int d = 0; d < dim; d++) {
                    values[e * dim + d] *= scale[e];
                }
            }
            return values;
        };
    }

    /** {@code rank^-skew} for a shuffled rank per expert, normalised to a mean of 1 (the router's usual scale). */
    static float[] scales(int experts, float skew, SplittableRandom random) {
        int[] rank = new int[experts];
        for (int i = 0; i < experts; i++) {
            rank[i] = i + 1;
        }
        for (int i = experts - 1; i > 0; i--) { // Fisher-Yates
            int j = random.nextInt(i + 1);
            int t = rank[i];
            rank[i] = rank[j];
            rank[j] = t;
        }
        double[] raw = new double[experts];
        double sum = 0;
        for (int e = 0; e < experts; e++) {
            raw[e] = Math.pow(rank[e], -skew);
            sum += raw[e];
        }
        float[] scale = new float[experts];
        for (int e = 0; e < experts; e++) {
            scale[e] = (float) (raw[e] * experts / sum);
        }
        return scale;
    }
}
