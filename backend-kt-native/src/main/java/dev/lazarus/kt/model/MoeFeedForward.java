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
        int[] consumed = new int[chosen.length];
        float[][] result = new float[n][];
        for (int i = 0; i < n; i++) {
            float[] acc = null;
            ExpertRouter.Route route = routes[i];
            for (int k = 0; k < route.experts().length; k++) {
                int j = jobOfExpert[route.experts()[k]];
                // tokens were appended to each expert's group in token order, so this token's row is the next one
                float[] y = outputs[j][consumed[j]++];
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
            result[i] = acc;
        }
        if (shared != null) {
            float[][] s = shared.forward(xn);
            for (int i = 0; i < n; i++) {
                Numerics.addInPlace(result[i], s[i]);
            }
        }
        return result;
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
