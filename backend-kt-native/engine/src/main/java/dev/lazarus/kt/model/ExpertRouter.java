package dev.lazarus.kt.model;

import java.util.Arrays;

/**
 * Chooses experts for one token and weighs them, as llama.cpp's {@code build_moe_ffn} does:
 * an optional bias on the logits ({@code ffn_gate_inp.bias}, gpt-oss); probabilities by softmax or
 * sigmoid, or the raw logits ({@link MoeConfig.Gating#SOFTMAX_WEIGHT}); an optional bias
 * ({@code exp_probs_b}) added for the CHOICE only; optional group-limited routing (groups scored by
 * the sum of their two best experts, all but the best {@code groupsUsed} groups masked); top-k;
 * weights taken from the unbiased probabilities (softmaxed among the chosen for SOFTMAX_WEIGHT),
 * optionally renormalised to sum 1 and scaled.
 */
public final class ExpertRouter {

    /** Experts chosen for a token, best first, and their weights. */
    public record Route(int[] experts, float[] weights) {}

    /** Below this a weight sum is clamped (the smallest normal F16), as llama.cpp does against division by zero. */
    private static final float MIN_WEIGHT_SUM = 6.103515625e-5f;

    private final MoeConfig config;
    private final float[] logitBias;
    private final float[] selectionBias;

    public ExpertRouter(MoeConfig config, float[] selectionBias) {
        this(config, null, selectionBias);
    }

    /** {@code logitBias}: added to the router's logits before gating (null: none). */
    public ExpertRouter(MoeConfig config, float[] logitBias, float[] selectionBias) {
        this.config = config;
        this.logitBias = requireExperts(logitBias, "ffn_gate_inp.bias");
        this.selectionBias = requireExperts(selectionBias, "exp_probs_b");
    }

    private float[] requireExperts(float[] bias, String name) {
        if (bias != null && bias.length != config.expertCount()) {
            throw new ModelFormatException(name + " has " + bias.length + " values for " + config.expertCount()
                    + " experts");
        }
        return bias;
    }

    public Route route(float[] logits) {
        int n = config.expertCount();
        float[] probs = Arrays.copyOf(logits, n);
        if (logitBias != null) {
            for (int e = 0; e < n; e++) {
                probs[e] += logitBias[e];
            }
        }
        switch (config.gating()) {
            case SOFTMAX -> Numerics.softmaxRow(probs, n);
            case SIGMOID -> {
                for (int e = 0; e < n; e++) {
                    probs[e] = Numerics.sigmoid(probs[e]);
                }
            }
            case SOFTMAX_WEIGHT -> { } // the logits are the probabilities until the chosen ones are softmaxed
        }
        float[] selection = probs;
        if (selectionBias != null) {
            selection = new float[n];
            for (int e = 0; e < n; e++) {
                selection[e] = probs[e] + selectionBias[e];
            }
        }
        if (config.groupCount() > 1) {
            selection = maskGroups(selection);
        }
        int[] chosen = topK(selection, config.expertsUsed());
        float[] weights = new float[chosen.length];
        for (int k = 0; k < chosen.length; k++) {
            weights[k] = probs[chosen[k]];
        }
        if (config.gating() == MoeConfig.Gating.SOFTMAX_WEIGHT) {
            Numerics.softmaxRow(weights, weights.length);
        }
        if (config.normalizeWeights()) {
            // ggml's sum_rows accumulates in double (ggml_float) and rounds once; an f32 running sum differs
            // from it once more than two experts are used
            double total = 0;
            for (float w : weights) {
                total += w;
            }
            float sum = Math.max((float) total, MIN_WEIGHT_SUM);
            for (int k = 0; k < weights.length; k++) {
                weights[k] /= sum;
            }
        }
        float scale = config.weightsScale();
        if (scale != 0f && scale != 1f) {
            for (int k = 0; k < weights.length; k++) {
                weights[k] *= scale;
            }
        }
        return new Route(chosen, weights);
    }

    private float[] maskGroups(float[] selection) {
        int groups = config.groupCount();
        int perGroup = config.expertCount() / groups;
        float[] scores = new float[groups];
        for (int g = 0; g < groups; g++) {
            float[] members = Arrays.copyOfRange(selection, g * perGroup, (g + 1) * perGroup);
            int[] best = topK(members, Math.min(2, perGroup));
            for (int b : best) {
                scores[g] += members[b];
            }
        }
        boolean[] keep = new boolean[groups];
        for (int g : topK(scores, config.groupsUsed())) {
            keep[g] = true;
        }
        float[] masked = Arrays.copyOf(selection, selection.length);
        for (int g = 0; g < groups; g++) {
            if (!keep[g]) {
                Arrays.fill(masked, g * perGroup, (g + 1) * perGroup, Float.NEGATIVE_INFINITY);
            }
        }
        return masked;
    }

    /** Indices of the {@code k} largest values, largest first; ties keep the lower index first. */
    static int[] topK(float[] values, int k) {
        int[] best = new int[k];
        Arrays.fill(best, -1);
        for (int i = 0; i < values.length; i++) {
            int at = k;
            while (at > 0 && (best[at - 1] < 0 || values[i] > values[best[at - 1]])) {
                at--;
            }
            if (at < k) {
                System.arraycopy(best, at, best, at + 1, k - at - 1);
                best[at] = i;
            }
        }
        return best;
    }
}
