package dev.lazarus.kt.model;

import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * qwen35moe's and qwen3next's linear attention, as llama.cpp's graph and ggml's CPU ops compute it: the joint projection of queries,
 * keys and values through a causal convolution (its last inputs kept per sequence) and SiLU; queries and keys
 * L2-normalised per head; per value head a state matrix that decays by {@code exp(g)}, takes the delta rule's
 * correction {@code k ⊗ β(v - Sᵀk)} and is read by the query ({@code ggml_gated_delta_net}, token after token: ggml's
 * CPU op runs the recurrence sequentially for prompts too, so any split of a prompt into batches gives the same
 * state); the per-head RMS norm gated by SiLU of {@code z}; the output projection. The recurrent state lives in each
 * sequence's {@link KvCache}, which this block's positions do not use.
 */
final class GatedDeltaNet implements Attention {

    /**
     * The block's tensors; {@code conv} is {@code [channels][kernel]} row by row, as the GGUF holds it; {@code alpha} is
     * null where {@code beta} gives both ({@link DeltaNetConfig#groupedHeads}); {@code gate} is null where {@code qkv}
     * is older qwen3next GGUFs' fused {@code ssm_in}: per key head its queries, keys, values and z, whose rows llama.cpp
     * takes apart after the product as this block does.
     */
    record Weights(WeightMatrix qkv, WeightMatrix gate, float[] conv, float[] dtBias, float[] a, WeightMatrix beta,
                   WeightMatrix alpha, float[] norm, WeightMatrix output) {}

    private final int block;
    private final DeltaNetConfig config;
    private final Weights weights;
    private final float eps;
    private final Parallel parallel;
    private final int state;
    private final int channels;
    private final int taps;
    private final int convFloats;
    /** Value heads per key head. */
    private final int group;
    private final float scale;
    /** The rms norm's epsilon and the scale that make it the L2 norm of a {@code state}-wide head. */
    private final float l2Eps;
    private final float l2Scale;

    GatedDeltaNet(int block, DeltaNetConfig config, Weights weights, float eps, Parallel parallel) {
        this.block = block;
        this.config = config;
        this.weights = weights;
        this.eps = eps;
        this.parallel = parallel;
        this.state = config.stateSize();
        this.channels = config.convChannels();
        this.taps = config.convKernel();
        this.convFloats = channels * (taps - 1);
        this.group = config.valueHeads() / config.keyHeads();
        this.scale = 1.0f / (float) Math.sqrt(state);
        this.l2Eps = eps / state;
        this.l2Scale = 1.0f / (float) Math.sqrt((float) state);
        requireLength("ssm_conv1d", weights.conv(), channels * taps);
        requireLength("ssm_dt", weights.dtBias(), config.valueHeads());
        requireLength("ssm_a", weights.a(), config.valueHeads());
        requireLength("ssm_norm", weights.norm(), state);
        int betaRows = weights.alpha() == null ? 2 * config.valueHeads() : config.valueHeads();
        if ((weights.alpha() == null) != config.groupedHeads() || weights.beta().rows() != betaRows) {
            throw new ModelFormatException("block " + block + ": " + (config.groupedHeads()
                    ? "ssm_ba with " + 2 * config.valueHeads() + " rows" : "ssm_beta and ssm_alpha")
                    + " expected for " + config.valueHeads() + " value heads");
        }
        if (weights.gate() == null && (!config.groupedHeads() || weights.qkv().rows() != channels + config.valueDim())) {
            throw new ModelFormatException("block " + block + ": ssm_in has " + weights.qkv().rows() + " rows for "
                    + (channels + config.valueDim()) + (config.groupedHeads() ? "" : " (qwen3next's layout only)"));
        }
        if (weights.gate() != null && (weights.qkv().rows() != channels || weights.gate().rows() != config.valueDim())) {
            throw new ModelFormatException("block " + block + ": attn_qkv/attn_gate have " + weights.qkv().rows() + "/"
                    + weights.gate().rows() + " rows for " + channels + "/" + config.valueDim());
        }
    }

    private void requireLength(String name, float[] v, int n) {
        if (v.length != n) {
            throw new ModelFormatException("block " + block + ": " + name + " has " + v.length + " values, not " + n);
        }
    }

    /** Nothing per position: the state is per sequence ({@link KvCache#recurrent}). */
    @Override
    public int keyWidth() {
        return 0;
    }

    @Override
    public int valueWidth() {
        return 0;
    }

    @Override
    public int keyHeadWidth() {
        return 0;
    }

    @Override
    public int valueHeadWidth() {
        return 0;
    }

    @Override
    public int recurrentWidth() {
        return config.stateFloats();
    }

    @Override
    public float[][] forward(ForwardBatch batch, float[][] ropeTables, float[][] xn) {
        PhasedStep step = begin(batch, ropeTables, xn);
        parallel.forPhases(phases(), step);
        return step.finish();
    }

    /** The input projections' rows; every (sequence, value head) recurrence; the output projection's rows. */
    @Override
    public int phases() {
        return 3;
    }

    @Override
    public PhasedStep begin(ForwardBatch batch, float[][] ropeTables, float[][] xn) {
        return new Step(batch, xn);
    }

    private final class Step implements PhasedStep {

        private final ForwardBatch batch;
        private final float[][] xn;
        private Projections in;
        private List<int[]> sequences;
        /** Per token: the convolved queries, keys and values; the decay and beta per value head; the core output. */
        private float[][] mixed;
        private float[][] decay;
        private float[][] beta;
        private float[][] core;
        /** Per token: the output gate z. */
        private float[][] z;
        private Projections out;

        Step(ForwardBatch batch, float[][] xn) {
            this.batch = batch;
            this.xn = xn;
        }

        @Override
        public int open(int phase) {
            return switch (phase) {
                case 0 -> {
                    in = new Projections(parallel, Stream.of(weights.qkv(), weights.gate(),
                            weights.beta(), weights.alpha()).filter(Objects::nonNull).toArray(WeightMatrix[]::new),
                            xn);
                    yield in.rows();
                }
                case 1 -> {
                    prepare();
                    yield sequences.size() * config.valueHeads();
                }
                default -> {
                    gatedNorm();
                    out = new Projections(parallel, new WeightMatrix[] {weights.output()}, core);
                    yield out.rows();
                }
            };
        }

        @Override
        public void run(int phase, int from, int to) {
            switch (phase) {
                case 0 -> in.run(from, to);
                case 1 -> {
                    for (int task = from; task < to; task++) {
                        recur(sequences.get(task / config.valueHeads()), task % config.valueHeads());
                    }
                }
                default -> out.run(from, to);
            }
        }

        @Override
        public int grain(int phase) {
            return phase == 0 ? in.grain() : phase == 1 ? 1 : out.grain();
        }

        @Override
        public float[][] finish() {
            return out.outputs()[0];
        }

        /** The convolution of every sequence's tokens (and its new state), the norms, decays and betas. */
        private void prepare() {
            float[][][] p = in.outputs();
            int n = batch.size();
            float[][] qkv = weights.gate() != null ? p[0] : new float[n][channels];
            z = weights.gate() != null ? p[1] : new float[n][config.valueDim()];
            if (weights.gate() == null) {
                unfuse(p[0], qkv);
            }
            float[][] ba = p[weights.gate() != null ? 2 : 1];
            float[][] alphas = weights.alpha() == null ? ba : p[3];
            mixed = new float[n][channels];
            decay = new float[n][config.valueHeads()];
            beta = new float[n][config.valueHeads()];
            core = new float[n][config.valueDim()];
            sequences = bySequence();
            for (int[] tokens : sequences) {
                convolve(batch.caches()[tokens[0]].recurrent(block), tokens, qkv);
            }
            parallel.forTokens(n, (from, to) -> {
                for (int i = from; i < to; i++) {
                    float[] x = mixed[i];
                    for (int c = 0; c < channels; c++) {
                        x[c] = Numerics.silu(x[c], c, channels);
                    }
                    for (int h = 0; h < 2 * config.keyHeads(); h++) {
                        l2Normalize(x, h * state, state);
                    }
                    for (int h = 0; h < config.valueHeads(); h++) {
                        beta[i][h] = Numerics.sigmoid(ba[i][betaRow(h)]);
                        float alpha = weights.alpha() == null ? alphas[i][betaRow(h) + group] : alphas[i][h];
                        decay[i][h] = softplus(alpha + weights.dtBias()[h]) * weights.a()[h];
                    }
                }
            });
        }

        /**
         * {@code ssm_in}'s rows, per key head its queries, keys, its value heads' values and their z, into the queries,
         * keys and values of all heads (the convolution's channels) and the z of all value heads.
         */
        private void unfuse(float[][] fused, float[][] qkv) {
            int keys = config.keyDim();
            int values = group * state;
            for (int i = 0; i < fused.length; i++) {
                for (int g = 0; g < config.keyHeads(); g++) {
                    int at = g * (2 * state + 2 * values);
                    System.arraycopy(fused[i], at, qkv[i], g * state, state);
                    System.arraycopy(fused[i], at + state, qkv[i], keys + g * state, state);
                    System.arraycopy(fused[i], at + 2 * state, qkv[i], 2 * keys + g * values, values);
                    System.arraycopy(fused[i], at + 2 * state + values, z[i], g * values, values);
                }
            }
        }

        /** Value head {@code h}'s row of the beta projection: per key head its group's betas, then their alphas. */
        private int betaRow(int h) {
            return weights.alpha() == null ? h / group * 2 * group + h % group : h;
        }

        /** The batch's token indices grouped by sequence, each group in batch (= position) order. */
        private List<int[]> bySequence() {
            Map<KvCache, List<Integer>> groups = new IdentityHashMap<>();
            List<KvCache> order = new ArrayList<>();
            for (int i = 0; i < batch.size(); i++) {
                KvCache cache = batch.caches()[i];
                groups.computeIfAbsent(cache, c -> {
                    order.add(c);
                    return new ArrayList<>();
                }).add(i);
            }
            List<int[]> out = new ArrayList<>(order.size());
            for (KvCache c : order) {
                out.add(groups.get(c).stream().mapToInt(Integer::intValue).toArray());
            }
            return out;
        }

        /**
         * ggml_ssm_conv over [kept inputs | this batch's inputs] per channel: each output the sum over the kernel's
         * taps in order, every product rounded before it is added (build 11669's CPU variants compile this loop
         * without fused multiply-adds); then the last inputs kept.
         */
        private void convolve(float[] st, int[] tokens, float[][] qkv) {
            int kept = taps - 1;
            int t = tokens.length;
            float[] w = weights.conv();
            parallel.forTokens(t, (from, to) -> {
                for (int j = from; j < to; j++) {
                    float[] y = mixed[tokens[j]];
                    for (int c = 0; c < channels; c++) {
                        float sum = 0f;
                        for (int k = 0; k < taps; k++) {
                            int at = j + k - kept; // <0: a kept input
                            float x = at < 0 ? st[c * kept + kept + at] : qkv[tokens[at]][c];
                            sum += x * w[c * taps + k];
                        }
                        y[c] = sum;
                    }
                }
            });
            float[] next = new float[convFloats];
            for (int c = 0; c < channels; c++) {
                for (int k = 0; k < kept; k++) {
                    int at = t + k - kept;
                    next[c * kept + k] = at < 0 ? st[c * kept + kept + at] : qkv[tokens[at]][c];
                }
            }
            System.arraycopy(next, 0, st, 0, convFloats);
        }

        /** One value head's state through one sequence's tokens, as ggml's gated_delta_net CPU op (state transposed). */
        private void recur(int[] tokens, int h) {
            float[] st = batch.caches()[tokens[0]].recurrent(block);
            int base = convFloats + h * state * state;
            int qOff = config.keyHead(h) * state;
            int kOff = config.keyDim() + qOff;
            int vOff = 2 * config.keyDim() + h * state;
            float[] delta = new float[state];
            for (int i : tokens) {
                float[] x = mixed[i];
                GgmlVec.scale(st, base, Libm.exp(decay[i][h]), state * state);
                float b = beta[i][h];
                for (int j = 0; j < state; j++) {
                    float sum = GgmlVec.dot(st, base + j * state, x, kOff, state);
                    delta[j] = (x[vOff + j] - sum) * b;
                }
                for (int j = 0; j < state; j++) {
                    GgmlVec.mad(st, base + j * state, x, kOff, delta[j], state);
                }
                for (int j = 0; j < state; j++) {
                    core[i][h * state + j] = GgmlVec.dot(st, base + j * state, x, qOff, state) * scale;
                }
            }
        }

        /** Per value head: RMS norm by {@code ssm_norm}, times SiLU of the output gate z. */
        private void gatedNorm() {
            parallel.forTokens(batch.size(), (from, to) -> {
                for (int i = from; i < to; i++) {
                    for (int h = 0; h < config.valueHeads(); h++) {
                        int off = h * state;
                        Numerics.rmsNorm(core[i], off, state, weights.norm(), eps, core[i], off);
                        for (int j = 0; j < state; j++) {
                            core[i][off + j] *= Numerics.silu(z[i][off + j], j, state);
                        }
                    }
                }
            });
        }
    }

    /**
     * The L2 norm of one row as build 11669's graph computes it: not ggml_l2_norm but {@code ggml_rms_norm} with
     * {@code eps / n}, then {@code ggml_scale} by {@code 1 / sqrtf(n)}: the f32 squares summed in double, their
     * mean rounded to f32, {@code x * (1 / sqrtf(mean + eps / n))}, then the second multiply.
     */
    private void l2Normalize(float[] x, int off, int n) {
        Numerics.rmsNorm(x, off, n, null, l2Eps, x, off);
        for (int i = 0; i < n; i++) {
            x[off + i] *= l2Scale;
        }
    }

    /** ggml's softplus op: the input above 20, else {@code logf(1.0f + expf(x))}. */
    private static float softplus(float x) {
        return x > 20.0f ? x : Libm.log(1.0f + Libm.exp(x));
    }
}
