package dev.lazarus.kt.model;

import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.util.ArrayList;
import java.util.List;

/**
 * A mixture-of-experts FFN over a batch: route every token, group the tokens by expert, run each
 * chosen expert once over its group (its weights read once per step, however many sequences chose
 * it), then sum each token's expert outputs by weight in routing order (as ggml adds them), plus
 * the shared expert when the block has one.
 */
final class MoeFeedForward implements FeedForward {

    private final WeightMatrix gateInput;
    private final ExpertRouter router;
    private final int layer;
    private final int expertCount;
    private final ExpertDispatch experts;
    private final FeedForward shared;
    private final Parallel parallel;
    private final RoutingStats routing;
    private final int slot;
    /** The router's activations and logits. */
    private final Scratch.Slot scratch = new Scratch.Slot();

    /** {@code slot}: this block's position among the MoE blocks, where its routing is counted in {@code routing}. */
    MoeFeedForward(WeightMatrix gateInput, ExpertRouter router, int layer, int expertCount, ExpertDispatch experts,
                   FeedForward shared, Parallel parallel, RoutingStats routing, int slot) {
        this.gateInput = gateInput;
        this.router = router;
        this.layer = layer;
        this.expertCount = expertCount;
        this.experts = experts;
        this.shared = shared;
        this.parallel = parallel;
        this.routing = routing;
        this.slot = slot;
    }

    @Override
    public float[][] forward(float[][] xn) {
        int n = xn.length;
        ExpertRouter.Route[] routes = route(xn);
        List<List<Integer>> tokensOf = new ArrayList<>(expertCount);
        for (int e = 0; e < expertCount; e++) {
            tokensOf.add(null);
        }
        for (int i = 0; i < n; i++) {
            for (int e : routes[i].experts()) {
                if (tokensOf.get(e) == null) {
                    tokensOf.set(e, new ArrayList<>());
                }
                tokensOf.get(e).add(i);
            }
        }
        List<Integer> active = new ArrayList<>();
        for (int e = 0; e < expertCount; e++) {
            if (tokensOf.get(e) != null) {
                active.add(e);
            }
        }
        int[] chosen = new int[active.size()];
        float[][][] inputs = new float[active.size()][][];
        int[] jobOfExpert = new int[expertCount];
        for (int j = 0; j < chosen.length; j++) {
            int e = active.get(j);
            jobOfExpert[e] = j;
            chosen[j] = e;
            List<Integer> tokens = tokensOf.get(e);
            routing.record(slot, e, tokens.size());
            inputs[j] = new float[tokens.size()][];
            for (int t = 0; t < tokens.size(); t++) {
                inputs[j][t] = xn[tokens.get(t)];
            }
        }
        float[][][] outputs = experts.executor().apply(layer, chosen, inputs);
        // tokens were appended to each expert's group in token order: token i's row of job j is its rank there
        int[][] rowOf = new int[n][];
        int[] consumed = new int[chosen.length];
        for (int i = 0; i < n; i++) {
            int[] routed = routes[i].experts();
            rowOf[i] = new int[routed.length];
            for (int k = 0; k < routed.length; k++) {
                rowOf[i][k] = consumed[jobOfExpert[routed[k]]]++;
            }
        }
        float[][] s = shared != null ? shared.forward(xn) : null;
        float[][] result = new float[n][];
        // each token's sum in routing order (then the shared expert's), only spread over threads by token
        parallel.forTokens(n, (from, to) -> {
            for (int i = from; i < to; i++) {
                result[i] = weightedSum(routes[i], rowOf[i], jobOfExpert, outputs);
                if (s != null) {
                    Numerics.addInPlace(result[i], s[i]);
                }
            }
        });
        return result;
    }

    /** {@code Σ_k weight_k · y_k} over a token's experts in routing order, as ggml adds them. */
    private static float[] weightedSum(ExpertRouter.Route route, int[] rows, int[] jobOfExpert, float[][][] outputs) {
        float[] acc = null;
        for (int k = 0; k < route.experts().length; k++) {
            float[] y = outputs[jobOfExpert[route.experts()[k]]][rows[k]];
            float w = route.weights()[k];
            if (acc == null) {
                acc = new float[y.length];
                for (int d = 0; d < y.length; d++) {
                    acc[d] = y[d] * w;
                }
            } else {
                for (int d = 0; d < y.length; d++) {
                    acc[d] += y[d] * w;
                }
            }
        }
        return acc;
    }

    private ExpertRouter.Route[] route(float[][] xn) {
        Scratch s = scratch.take();
        try {
            float[][] logits = new Projections(parallel, new WeightMatrix[] {gateInput}, xn, s, true).run(parallel)[0];
            ExpertRouter.Route[] routes = new ExpertRouter.Route[xn.length];
            for (int i = 0; i < xn.length; i++) {
                routes[i] = router.route(logits[i]);
            }
            return routes;
        } finally {
            scratch.give(s);
        }
    }
}
