package dev.lazarus.kt.synthetic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.synthetic.SyntheticModels.Spec;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The device benchmark's two realistic-size presets route as their names say: their routers (the only tensors read
 * here, drawn as the writer draws them, without writing 2.7 GB) applied to random unit-scale activations give the top
 * 10 % of experts (over all layers, as GpuDecodeBenchmark's "top-10% use" counts) about their fair share with
 * {@code benchQwen3MoeFlat} and about three times it with {@code benchQwen3MoeSkewed}.
 */
class RoutingSkewTest {

    private static final int TOKENS = 400;

    @Test
    void theFlatPresetRoutesEvenlyAndTheSkewedOneDoesNot() {
        Spec flat = SyntheticModels.preset("benchQwen3MoeFlat");
        Spec skewed = SyntheticModels.preset("benchQwen3MoeSkewed");
        assertThat(flat.moe().routingSkew()).isZero();
        // the same shapes: only the routing differs between the two device models
        assertThat(flat.moe()).isEqualTo(skewed.moe().withRoutingSkew(0f));
        assertThat(new int[] {flat.layers(), flat.dim(), flat.heads(), flat.kvHeads(), flat.headDim(), flat.ffn()})
                .containsExactly(skewed.layers(), skewed.dim(), skewed.heads(), skewed.kvHeads(), skewed.headDim(), skewed.ffn());
        assertThat(flat.weightType()).isEqualTo(skewed.weightType());
        // measured with 400 tokens: flat 0.124, skewed 0.317; an exactly even choice gives 0.10 plus the
        // sampling noise of ~50 choices per expert (the top tenth of 512 counts sits ~1.75 sigma above the mean)
        assertThat(topTenthShare(flat)).isBetween(0.09, 0.14);
        assertThat(topTenthShare(skewed)).isGreaterThan(0.25);
    }

    /** The share of the routed choices that went to the most chosen 10 % of (layer, expert) pairs. */
    private static double topTenthShare(Spec spec) {
        int dim = spec.dim(), experts = spec.moe().experts(), k = spec.moe().used();
        RandomWeights weights = new RandomWeights(spec.seed(), spec.weightType());
        long[] counts = new long[spec.layers() * experts];
        SplittableRandom random = new SplittableRandom(1);
        float[][] tokens = new float[TOKENS][dim];
        for (float[] x : tokens) {
            for (int d = 0; d < dim; d++) {
                x[d] = (float) (Math.sqrt(3.0) * (2 * random.nextDouble() - 1)); // unit variance, as after the norm
            }
        }
        int layer = 0;
        for (TensorLayout.Entry t : TensorLayout.of(spec, ByteBpeVocab.standard().size())) {
            if (!t.name().endsWith("ffn_gate_inp.weight")) {
                continue;
            }
            float[] router = weights.values(t);
            double[] logits = new double[experts];
            for (float[] x : tokens) {
                for (int e = 0; e < experts; e++) {
                    double s = 0;
                    for (int d = 0; d < dim; d++) {
                        s += router[e * dim + d] * x[d];
                    }
                    logits[e] = s;
                }
                Integer[] order = new Integer[experts];
                Arrays.setAll(order, i -> i);
                Arrays.sort(order, (a, b) -> Double.compare(logits[b], logits[a])); // softmax keeps the order
                for (int j = 0; j < k; j++) {
                    counts[layer * experts + order[j]]++;
                }
            }
            layer++;
        }
        assertThat(layer).isEqualTo(spec.layers());
        long[] sorted = counts.clone();
        Arrays.sort(sorted);
        int top = (int) Math.round(sorted.length * 0.1);
        long hot = 0;
        for (int i = sorted.length - top; i < sorted.length; i++) {
            hot += sorted[i];
        }
        return (double) hot / Arrays.stream(sorted).sum();
    }
}
