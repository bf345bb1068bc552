package dev.lazarus.kt.model;

import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.parallel.PhasedBody;
import dev.lazarus.kt.tensor.WeightMatrix;

/**
 * Multi-head attention with grouped key/value heads (llama, qwen3, qwen3moe, glm4moe, gpt-oss, minimax-m2), optionally
 * with biases on the projections (glm4moe: Q, K, V; gpt-oss: all four), RMS norms on queries and keys before rope
 * (qwen3's QK-norm per head; minimax-m2's over the whole projection, across heads, told apart by the norm weight's
 * length), attention sinks (gpt-oss), a sliding window (gpt-oss's even blocks) and an output gate
 * (qwen35moe: {@code attn_q} has twice the rows, each head's queries followed by its gate, and the attended vectors
 * are multiplied by the gate's sigmoid before the output projection).
 */
final class GroupedQueryAttention implements Attention {

    /**
     * The block's tensors; every one after {@code output} may be null (absent).
     *
     * @param sinks one logit per query head that joins the softmax's denominator
     */
    record Weights(WeightMatrix q, WeightMatrix k, WeightMatrix v, WeightMatrix output,
                   float[] qBias, float[] kBias, float[] vBias, float[] outputBias,
                   float[] qNorm, float[] kNorm, float[] sinks) {}

    private final int block;
    private final int heads;
    private final int kvHeads;
    private final int headDim;
    private final int valueDim;
    private final WeightMatrix[] qkv;
    private final WeightMatrix output;
    private final Weights weights;
    private final float[] qNorm;
    private final float[] kNorm;
    private final boolean gated;
    /** Positions a query attends, its own included; 0: all. */
    private final int window;
    private final float eps;
    private final Rope rope;
    private final float scale;
    private final AttentionOrder order;
    private final Parallel parallel;
    /**
     * Activations, Q/K/V and the attended vectors of one call; its output is allocated (the caller keeps it). One slot
     * for every block, whose calls come one after the other: a prompt's buffers are kept for the next block and prompt.
     */
    private static final Scratch.Slot SCRATCH = Scratch.Slot.retaining(Scratch.RETAINED_BYTES);
    /** Tokens per task of flash attention's tiled order (with every query head of one KV head). */
    private static final int TILE_BLOCK = 32;
    private static final ThreadLocal<FlashTiles.Rows> TILE_ROWS = ThreadLocal.withInitial(FlashTiles.Rows::new);

    GroupedQueryAttention(int block, ModelConfig config, Weights weights, Rope rope, AttentionOrder order,
                          Parallel parallel) {
        this.block = block;
        this.heads = config.headCount();
        this.kvHeads = config.headCountKv();
        this.headDim = config.keyLength();
        this.valueDim = config.valueLength();
        this.qkv = new WeightMatrix[] {weights.q(), weights.k(), weights.v()};
        this.output = weights.output();
        this.weights = weights;
        this.qNorm = weights.qNorm();
        this.kNorm = weights.kNorm();
        this.gated = weights.q().rows() == 2 * heads * headDim;
        this.window = config.isSlidingWindowBlock(block) ? config.slidingWindow() : 0;
        if (weights.sinks() != null && weights.sinks().length != heads) {
            throw new ModelFormatException("attn_sinks of block " + block + " has " + weights.sinks().length
                    + " values for " + heads + " heads");
        }
        requireQkNorm(qNorm, heads, "attn_q_norm");
        requireQkNorm(kNorm, kvHeads, "attn_k_norm");
        this.eps = config.rmsEps();
        this.rope = rope;
        this.scale = 1.0f / (float) Math.sqrt(headDim);
        this.order = order;
        this.parallel = parallel;
    }

    @Override
    public int keyWidth() {
        return kvHeads * headDim;
    }

    @Override
    public int valueWidth() {
        return kvHeads * valueDim;
    }

    @Override
    public int keyHeadWidth() {
        return headDim;
    }

    @Override
    public int valueHeadWidth() {
        return valueDim;
    }

    /**
     * Three phases: the Q, K and V rows; every (token, head) attention; the output rows. Between them, on whichever
     * thread finished the phase before: QK-norm, rope and the cache store, then the conversion of the attended
     * vectors for the output matrix.
     */
    @Override
    public float[][] forward(ForwardBatch batch, float[][] ropeTables, float[][] xn) {
        PhasedStep step = begin(batch, ropeTables, xn);
        parallel.forPhases(phases(), step);
        return step.finish();
    }

    @Override
    public int phases() {
        return 3;
    }

    @Override
    public PhasedStep begin(ForwardBatch batch, float[][] ropeTables, float[][] xn) {
        return new Step(batch, ropeTables, xn, SCRATCH.take());
    }

    /** The buffers of one {@link #forward} and its phases; the scratch goes back to its slot at {@link #finish}. */
    private final class Step implements PhasedStep {

        private final ForwardBatch batch;
        private final float[][] ropeTables;
        private final float[][] xn;
        private final float[][] attended;
        private final Scratch stepScratch;
        private Projections qkvRows;
        private float[][] q;
        private float[][] gate;
        private Projections out;
        /** Whether phase 1 runs flash attention's tiled order by blocks ({@link #attendTiled}). */
        private boolean tiled;

        Step(ForwardBatch batch, float[][] ropeTables, float[][] xn, Scratch scratch) {
            this.batch = batch;
            this.ropeTables = ropeTables;
            this.xn = xn;
            this.stepScratch = scratch;
            // every head of every token writes its part
            this.attended = scratch.floats(batch.size(), heads * valueDim);
        }

        @Override
        public int open(int phase) {
            return switch (phase) {
                case 0 -> {
                    qkvRows = new Projections(parallel, qkv, xn, stepScratch, true);
                    yield qkvRows.rows();
                }
                case 1 -> {
                    storeKeysAndValues();
                    tiled = order.flash() && batch.size() >= FlashAttentionKernel.TILE;
                    yield tiled ? (batch.size() + TILE_BLOCK - 1) / TILE_BLOCK * kvHeads : batch.size() * heads;
                }
                default -> {
                    rotateBack();
                    if (gated) {
                        applyGate();
                    }
                    // open() runs on one thread while the others wait for the phase: the scratch is never lent concurrently
                    out = new Projections(parallel, new WeightMatrix[] {output}, attended, stepScratch, false);
                    yield out.rows();
                }
            };
        }

        @Override
        public void run(int phase, int from, int to) {
            switch (phase) {
                case 0 -> qkvRows.run(from, to);
                case 1 -> {
                    if (tiled) {
                        attendTiled(from, to);
                    } else {
                        attend(from, to);
                    }
                }
                default -> out.run(from, to);
            }
        }

        @Override
        public int grain(int phase) {
            return phase == 0 ? qkvRows.grain() : phase == 1 ? 1 : out.grain();
        }

        @Override
        public float[][] finish() {
            float[][] result = out.outputs()[0];
            SCRATCH.give(stepScratch);
            addBias(result, weights.outputBias());
            return result;
        }

        private void storeKeysAndValues() {
            float[][][] p = qkvRows.outputs();
            q = p[0];
            float[][] k = p[1];
            float[][] v = p[2];
            addBias(q, weights.qBias());
            addBias(k, weights.kBias());
            addBias(v, weights.vBias());
            if (gated) {
                splitGate();
            }
            // per token; a prompt's tokens on the pool, where the threads waiting for the next phase help
            parallel.forTokens(batch.size(), (from, to) -> {
                for (int i = from; i < to; i++) {
                    normalizeHeads(q[i], heads, qNorm);
                    normalizeHeads(k[i], kvHeads, kNorm);
                    rope.apply(q[i], 0, heads, headDim, ropeTables[i]);
                    rope.apply(k[i], 0, kvHeads, headDim, ropeTables[i]);
                    KvCacheTypes types = batch.caches()[i].types();
                    int kChunk = KvRotation.keyChunk(types.keys(), headDim);
                    if (kChunk > 0) {
                        KvRotation.rotate(q[i], 0, heads * headDim, kChunk);
                        KvRotation.rotate(k[i], 0, kvHeads * headDim, kChunk);
                    }
                    int vChunk = KvRotation.valueChunk(types.values(), valueDim);
                    if (vChunk > 0) {
                        KvRotation.rotate(v[i], 0, kvHeads * valueDim, vChunk);
                    }
                    batch.caches()[i].store(block, batch.positions()[i], k[i], 0, v[i], 0);
                }
            });
        }

        /** Each head's queries and gate out of the joint projection. */
        private void splitGate() {
            float[][] joint = q;
            q = new float[joint.length][heads * headDim];
            gate = new float[joint.length][heads * headDim];
            for (int i = 0; i < joint.length; i++) {
                for (int h = 0; h < heads; h++) {
                    System.arraycopy(joint[i], 2 * h * headDim, q[i], h * headDim, headDim);
                    System.arraycopy(joint[i], (2 * h + 1) * headDim, gate[i], h * headDim, headDim);
                }
            }
        }

        /** The attended vectors of rotated values ({@link KvRotation}) rotated back. */
        private void rotateBack() {
            for (int i = 0; i < batch.size(); i++) {
                int vChunk = KvRotation.valueChunk(batch.caches()[i].types().values(), valueDim);
                if (vChunk > 0) {
                    KvRotation.rotate(attended[i], 0, heads * valueDim, vChunk);
                }
            }
        }

        /** The attended vectors times the sigmoid of the gate (ggml's sigmoid, then the multiply). */
        private void applyGate() {
            parallel.forTokens(batch.size(), (from, to) -> {
                for (int i = from; i < to; i++) {
                    for (int d = 0; d < heads * valueDim; d++) {
                        attended[i][d] *= Numerics.sigmoid(gate[i][d]);
                    }
                }
            });
        }

        private void attend(int from, int to) {
            for (int task = from; task < to; task++) {
                attendHead(task / heads, task % heads);
            }
        }

        /** Token i's head h in the configured order. */
        private void attendHead(int i, int h) {
            KvCache cache = batch.caches()[i];
            int kvh = h / (heads / kvHeads);
            int positions = batch.positions()[i] + 1;
            int first = window == 0 ? 0 : Math.max(0, positions - window);
            float sink = weights.sinks() == null ? Float.NEGATIVE_INFINITY : weights.sinks()[h];
            if (order.flash()) {
                FlashKv kv = TypedFlashKv.of(cache.keyRows(block), kvh * headDim, cache.valueRows(block),
                        kvh * valueDim, valueDim);
                FlashAttentionKernel.attend(q[i], h * headDim, headDim, kv, first, positions, scale, sink,
                        FlashAttentionKernel.path(batch.size(), positions, kv.floatRows() != null),
                        order.threads(), attended[i], h * valueDim);
            } else {
                AttentionKernel.attend(q[i], h * headDim, headDim, cache.keyRows(block), kvh * headDim,
                        cache.valueRows(block), kvh * valueDim, valueDim, first, positions, scale, sink,
                        attended[i], h * valueDim);
            }
        }

        /**
         * Flash attention's tiled order by blocks: task = (block of {@link #TILE_BLOCK} tokens, KV head), every
         * query head of the group and every token of one sequence in one {@link FlashTiles} call, which packs each
         * tile of keys once for all of them.
         */
        private void attendTiled(int from, int to) {
            int group = heads / kvHeads;
            FlashTiles.Rows rows = TILE_ROWS.get();
            for (int task = from; task < to; task++) {
                int kvh = task % kvHeads;
                int lo = task / kvHeads * TILE_BLOCK, hi = Math.min(lo + TILE_BLOCK, batch.size());
                for (int i = lo; i < hi; ) {
                    KvCache cache = batch.caches()[i];
                    int j = i;
                    while (j < hi && batch.caches()[j] == cache) {
                        j++;
                    }
                    FlashKv kv = TypedFlashKv.of(cache.keyRows(block), kvh * headDim, cache.valueRows(block),
                            kvh * valueDim, valueDim);
                    rows.clear();
                    for (int t = i; t < j; t++) {
                        for (int h = kvh * group; h < (kvh + 1) * group; h++) {
                            if (kv.floatRows() == null) {
                                attendHead(t, h);
                                continue;
                            }
                            int positions = batch.positions()[t] + 1;
                            int first = window == 0 ? 0 : Math.max(0, positions - window);
                            float sink = weights.sinks() == null ? Float.NEGATIVE_INFINITY : weights.sinks()[h];
                            rows.add(q[t], h * headDim, first, positions, null, sink, attended[t], h * valueDim);
                        }
                    }
                    if (rows.count > 0) {
                        FlashTiles.attend(kv.floatRows(), headDim, valueDim, scale, rows);
                    }
                    i = j;
                }
            }
        }
    }

    /** {@code x[i] += bias} for every token (ggml's add of a bias row); nothing when {@code bias} is null. */
    private static void addBias(float[][] x, float[] bias) {
        if (bias != null) {
            for (float[] row : x) {
                Numerics.addInPlace(row, bias);
            }
        }
    }

    private void requireQkNorm(float[] weight, int count, String name) {
        if (weight != null && weight.length != headDim && weight.length != count * headDim) {
            throw new ModelFormatException(name + " of block " + block + " has " + weight.length
                    + " values for heads of " + headDim + " (" + count + " heads)");
        }
    }

    /** QK-norm: per head, or over all {@code count} heads at once when the weight spans them (minimax-m2). */
    private void normalizeHeads(float[] x, int count, float[] weight) {
        if (weight == null) {
            return;
        }
        if (weight.length == count * headDim) {
            Numerics.rmsNorm(x, 0, count * headDim, weight, eps, x, 0);
            return;
        }
        for (int h = 0; h < count; h++) {
            Numerics.rmsNorm(x, h * headDim, headDim, weight, eps, x, h * headDim);
        }
    }
}
