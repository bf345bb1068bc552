package dev.lazarus.kt.model;

import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.tensor.VecDotType;
import dev.lazarus.kt.tensor.WeightMatrix;

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
    /** The shared expert's gate ({@code ffn_gate_inp_shexp}): its output times sigmoid(gate · x); null: ungated. */
    private final float[] sharedGate;
    private final Parallel parallel;
    private final RoutingStats routing;
    private final int slot;
    /** The router's activations and logits. */
    private final Scratch.Slot scratch = new Scratch.Slot();

    /** {@code slot}: this block's position among the MoE blocks, where its routing is counted in {@code routing}. */
    MoeFeedForward(WeightMatrix gateInput, ExpertRouter router, int layer, int expertCount, ExpertDispatch experts,
                   FeedForward shared, float[] sharedGate, Parallel parallel, RoutingStats routing, int slot) {
        this.gateInput = gateInput;
        this.router = router;
        this.layer = layer;
        this.expertCount = expertCount;
        this.experts = experts;
        this.shared = shared;
        this.sharedGate = sharedGate;
        this.parallel = parallel;
        this.routing = routing;
        this.slot = slot;
    }

    @Override
    public float[][] forward(float[][] xn) {
        PhasedStep step = begin(xn);
        parallel.forPhases(1, step);
        return step.finish();
    }

    /**
     * One phase, every chosen expert's rows; its opening routes the tokens and groups them by expert, and
     * {@link PhasedStep#finish} sums each token's expert outputs. An executor that runs its experts its own way
     * ({@link ExpertExecutor#begin} null) runs them where the phase opens, which then has no rows.
     */
    @Override
    public PhasedStep begin(float[][] xn) {
        return new Step(xn);
    }

    /** One {@link #forward}: the routes, the experts' groups of tokens and their outputs. */
    private final class Step implements PhasedStep {

        private final float[][] xn;
        private ExpertRouter.Route[] routes;
        private int[] jobOfExpert;
        private int chosen;
        private SwiGlu.Pass pass;
        private float[][][] outputs;

        Step(float[][] xn) {
            this.xn = xn;
        }

        @Override
        public int open(int phase) {
            routes = route(xn);
            float[][][] inputs = groupByExpert();
            int[] experts = new int[chosen];
            for (int e = 0, j = 0; e < expertCount; e++) {
                if (jobOfExpert[e] >= 0) {
                    experts[j++] = e;
                }
            }
            ExpertExecutor executor = MoeFeedForward.this.experts.executor();
            pass = executor.begin(layer, experts, inputs);
            if (pass == null) {
                outputs = executor.apply(layer, experts, inputs);
                return 0;
            }
            return pass.rows();
        }

        /** Each chosen expert's tokens, experts in ascending order and tokens in token order; fills jobOfExpert. */
        private float[][][] groupByExpert() {
            int[] count = new int[expertCount];
            for (ExpertRouter.Route r : routes) {
                for (int e : r.experts()) {
                    count[e]++;
                }
            }
            jobOfExpert = new int[expertCount];
            chosen = 0;
            for (int e = 0; e < expertCount; e++) {
                jobOfExpert[e] = count[e] > 0 ? chosen++ : -1;
            }
            float[][][] inputs = new float[chosen][][];
            int[] filled = new int[chosen];
            for (int e = 0; e < expertCount; e++) {
                if (count[e] > 0) {
                    inputs[jobOfExpert[e]] = new float[count[e]][];
                    routing.record(slot, e, count[e]);
                }
            }
            for (int i = 0; i < routes.length; i++) {
                for (int e : routes[i].experts()) {
                    int j = jobOfExpert[e];
                    inputs[j][filled[j]++] = xn[i];
                }
            }
            return inputs;
        }

        @Override
        public void run(int phase, int from, int to) {
            pass.run(from, to);
        }

        @Override
        public int grain(int phase) {
            return pass.grain();
        }

        @Override
        public float[][] finish() {
            if (pass != null) {
                outputs = pass.finish();
            }
            int n = xn.length;
            // tokens were appended to each expert's group in token order: token i's row of job j is its rank there
            int[][] rowOf = new int[n][];
            int[] consumed = new int[chosen];
            for (int i = 0; i < n; i++) {
                int[] routed = routes[i].experts();
                rowOf[i] = new int[routed.length];
                for (int k = 0; k < routed.length; k++) {
                    rowOf[i][k] = consumed[jobOfExpert[routed[k]]]++;
                }
            }
            float[][] s = shared != null ? shared.forward(xn) : null;
            float[][] result = new float[n][];
            float[][][] out = outputs;
            // each token's sum in routing order (then the shared expert's), only spread over threads by token
            parallel.forTokens(n, (from, to) -> {
                for (int i = from; i < to; i++) {
                    result[i] = weightedSum(routes[i], rowOf[i], jobOfExpert, out);
                    if (s != null) {
                        if (sharedGate != null) {
                            // ggml_mul_mat of the f32 gate row (ggml_vec_dot_f32), sigmoid, then the broadcast multiply
                            float g = Numerics.sigmoid(GgmlVec.dot(sharedGate, 0, xn[i], 0, sharedGate.length));
                            for (int d = 0; d < s[i].length; d++) {
                                s[i][d] *= g;
                            }
                        }
                        Numerics.addInPlace(result[i], s[i]);
                    }
                }
            });
            return result;
        }
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
            Projections gate = new Projections(parallel, new WeightMatrix[] {gateInput}, xn, s, true);
            if (xn.length >= Parallel.PER_TOKEN_MINIMUM && gateInput.vecDotType() != VecDotType.Q8_K) {
                // a prompt's router is rows × every token: split by single rows (its 32-128 rows were 2-8 chunks of 16,
                // on as many threads, 2.4 ms a block of the bench model's 512-token prompt at 16 threads); only the
                // K-quants' native layout keeps rows in groups of 16
                parallel.forRange(gate.rows(), 1, gate::run);
            } else {
                gate.run(parallel);
            }
            float[][] logits = gate.outputs()[0];
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
