package dev.lazarus.kt.model;

import dev.lazarus.kt.tensor.GgmlOrders;
import dev.lazarus.kt.tensor.KernelConfig;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.parallel.PhaseChain;
import dev.lazarus.kt.parallel.PhasedBody;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * A loaded model: token embedding, the blocks, the final norm and the output head. Weights stay in
 * the memory-mapped GGUF (the file must outlive the model). {@link #forward} is not reentrant: one
 * scheduler thread drives it and the work inside is spread over the {@link Parallel} pool.
 */
public final class Model {

    private final ModelConfig config;
    private final ModelTensors tensors;
    private final WeightMatrix embedding;
    private final List<TransformerBlock> blocks;
    private final float[] outputNorm;
    private final WeightMatrix output;
    private final Rope rope;
    private final KvLayout kvLayout;
    private final RoutingStats routingStats;
    private final Parallel parallel;
    private final List<ExpertLayer> expertLayers;
    private final ExpertDispatch expertDispatch;
    /** Runs whole forward passes instead of the CPU blocks when set (the GPU layer path); null: the CPU. */
    private volatile ForwardPath forwardPath;

    /** A forward pass computed elsewhere, with {@link #forward}'s contract. */
    @FunctionalInterface
    public interface ForwardPath {
        float[][] forward(ForwardBatch batch);
    }

    private GgmlOrders kvOrders = GgmlOrders.forHost();
    private MtpBlock mtp;

    Model(ModelConfig config, ModelTensors tensors, WeightMatrix embedding, List<TransformerBlock> blocks, float[] outputNorm,
          WeightMatrix output, Rope rope, RoutingStats routingStats, Parallel parallel, List<ExpertLayer> expertLayers,
          ExpertDispatch expertDispatch) {
        this.config = config;
        this.tensors = tensors;
        this.embedding = embedding;
        this.blocks = List.copyOf(blocks);
        this.outputNorm = outputNorm;
        this.output = output;
        this.rope = rope;
        this.routingStats = routingStats;
        this.parallel = parallel;
        this.expertLayers = List.copyOf(expertLayers);
        this.expertDispatch = expertDispatch;
        int[] keys = new int[blocks.size()];
        int[] values = new int[blocks.size()];
        int[] recurrent = new int[blocks.size()];
        for (int b = 0; b < blocks.size(); b++) {
            keys[b] = blocks.get(b).attention().keyWidth();
            values[b] = blocks.get(b).attention().valueWidth();
            recurrent[b] = blocks.get(b).attention().recurrentWidth();
        }
        this.kvLayout = new KvLayout(keys, values, recurrent);
    }

    /** Assembles the model described by the file's metadata from its tensors, with the kernels {@code kernels} picks. */
    public static Model load(GgufFile file, Parallel parallel, KernelConfig kernels) {
        return load(file, parallel, kernels, AttentionOrder.NON_FLASH);
    }

    /** As {@link #load(GgufFile, Parallel, KernelConfig)} under {@link KernelConfig#fromSystemProperties} (tests, tools). */
    public static Model load(GgufFile file, Parallel parallel) {
        return load(file, parallel, KernelConfig.fromSystemProperties(), AttentionOrder.NON_FLASH);
    }

    /** As {@link #load(GgufFile, Parallel)}, attention rounded in {@code order}. */
    public static Model load(GgufFile file, Parallel parallel, AttentionOrder order) {
        return load(file, parallel, KernelConfig.fromSystemProperties(), order);
    }

    /** The model with the kernels {@code kernels} picks and attention rounded in {@code order}. */
    public static Model load(GgufFile file, Parallel parallel, KernelConfig kernels, AttentionOrder order) {
        return new ModelAssembler(file, parallel, kernels, order).assemble();
    }

    /** Every tensor of {@code file}'s forward pass by block, as {@link #load} assembles them, without loading. */
    public static ModelTensors describe(GgufFile file) {
        return ModelAssembler.describe(file, ModelConfig.fromMetadata(file.metadata()));
    }

    /** The token embedding, as the CPU reads it (rows by id; the output head where tied). */
    public WeightMatrix embedding() {
        return embedding;
    }

    public ModelConfig config() {
        return config;
    }

    /** The tensors this model was assembled from, block by block: what other devices' paths upload. */
    public ModelTensors tensors() {
        return tensors;
    }

    public int vocabSize() {
        return output.rows();
    }

    void useMtp(MtpBlock block) {
        this.mtp = block;
    }

    /** The file's first NextN (multi-token prediction) block, computed on the CPU; null where it has none. */
    public MtpBlock mtp() {
        return mtp;
    }

    /** The summation orders of the quantised KV cache rows' dots: those of the kernels the model was loaded with. */
    void useKvOrders(GgmlOrders orders) {
        this.kvOrders = orders;
    }

    public KvLayout kvLayout() {
        return kvLayout;
    }

    public KvCache newCache(int maxPositions) {
        return newCache(maxPositions, KvCacheTypes.F16);
    }

    /** A cache of {@code types}; throws {@link IllegalArgumentException} where this model cannot hold them. */
    public KvCache newCache(int maxPositions, KvCacheTypes types) {
        checkCacheTypes(types, true);
        return new KvCache(kvLayout, types, maxPositions, kvOrders);
    }

    /**
     * Throws {@link IllegalArgumentException} with llama.cpp's reason where this model cannot use a cache of
     * {@code types}: a block type whose block size does not divide a head (as llama.cpp checks at context creation),
     * or a quantised V without {@code flashAttention} (llama.cpp stores V transposed then, which a block type cannot
     * be; an absorbed MLA block's values are its keys).
     */
    public void checkCacheTypes(KvCacheTypes types, boolean flashAttention) {
        if (config.architecture().sparseAttention() && !types.equals(KvCacheTypes.F16)) {
            // the indexer's keys share the latent's cache row here (llama.cpp keeps them in a cache of their own)
            throw new IllegalArgumentException(config.architecture().ggufName()
                    + " keeps an f16 KV cache in kt-native (cache types "
                    + types.keys().settingName() + "/" + types.values().settingName() + " asked)");
        }
        if (config.architecture().gatedDeltaNet() && !types.equals(KvCacheTypes.F16)) {
            // the full-attention blocks would take them, but no parity against llama-server holds them yet
            throw new IllegalArgumentException(config.architecture().ggufName() + " keeps an f16 KV cache in kt-native (cache types "
                    + types.keys().settingName() + "/" + types.values().settingName() + " asked; the recurrent "
                    + "state of its gated DeltaNet blocks is f32 whatever the cache types, as in llama.cpp)");
        }
        for (TransformerBlock block : blocks) {
            Attention a = block.attention();
            if (a.recurrentWidth() > 0) {
                continue; // no rows per position: the cache types do not apply
            }
            int kBlock = types.keys().ggmlType().blockSize();
            if (a.keyHeadWidth() % kBlock != 0) {
                throw new IllegalArgumentException("K cache type " + types.keys().settingName() + " with block size "
                        + kBlock + " does not divide the key head width " + a.keyHeadWidth());
            }
            if (a.valueWidth() == 0 && types.keys() != types.values()) {
                throw new IllegalArgumentException("this model's values are a view of its keys: it does not support "
                        + "different K (" + types.keys().settingName() + ") and V (" + types.values().settingName()
                        + ") cache types, as in llama.cpp");
            }
            KvCacheType valueType = a.valueWidth() == 0 ? types.keys() : types.values();
            int vBlock = valueType.ggmlType().blockSize();
            if (a.valueHeadWidth() % vBlock != 0) {
                throw new IllegalArgumentException("V cache type " + valueType.settingName() + " with block size "
                        + vBlock + " does not divide the value head width " + a.valueHeadWidth());
            }
            if (valueType.quantized() && !flashAttention) {
                throw new IllegalArgumentException("a quantized V cache (" + valueType.settingName()
                        + ") requires flash attention, as in llama.cpp");
            }
        }
    }

    /** How often each routed expert was chosen, slots in {@link #expertLayers()} order; null for dense models. */
    public RoutingStats routingStats() {
        return routingStats;
    }

    /** The routed experts of every MoE block, in block order (empty for dense models). */
    public List<ExpertLayer> expertLayers() {
        return expertLayers;
    }

    /** The pool the model computes on (what CPU-side expert executors should use too). */
    public Parallel parallel() {
        return parallel;
    }

    /**
     * Routes expert computations to {@code executor} from the next MoE block on (expert placement
     * installs its tiered executor this way; the default reads every expert from the mapped file).
     */
    public void useExpertExecutor(ExpertExecutor executor) {
        expertDispatch.use(executor);
    }

    /** Hands every following forward pass to {@code path} ({@code null}: back to the CPU blocks). */
    public void useForwardPath(ForwardPath path) {
        forwardPath = path;
    }

    /**
     * Runs the batch through the model: writes every token's keys and values into its cache at its
     * position and returns the logits of tokens that want them (null entries for the others). The last
     * block's feed-forward runs for those tokens only, as llama.cpp's graph does.
     */
    public float[][] forward(ForwardBatch batch) {
        ForwardPath path = forwardPath;
        if (path != null) {
            return path.forward(batch);
        }
        return forward(batch, null).logits();
    }

    /** A forward pass's logits and final hidden states (after the output norm), null where not wanted. */
    public record Output(float[][] logits, float[][] hidden) {
    }

    /**
     * As {@link #forward(ForwardBatch)}, also returning the final hidden state (after the output norm: what the NextN
     * block pairs with the next token) of every token {@code wantHidden} marks (null: none). The last block then keeps
     * those tokens too, as llama.cpp's graph does when MTP drafting asks for them. On the CPU blocks only: a GPU layer
     * path returns no hidden states.
     */
    public Output forward(ForwardBatch batch, boolean[] wantHidden) {
        int n = batch.size();
        ForwardPath path = forwardPath;
        if (path != null) {
            return new Output(path.forward(batch), new float[n][]);
        }
        int[] outputs = IntStream.range(0, n)
                .filter(i -> batch.wantLogits()[i] || (wantHidden != null && wantHidden[i])).toArray();
        int[] logitRows = IntStream.range(0, outputs.length).filter(j -> batch.wantLogits()[outputs[j]]).toArray();
        Head head = new Head(logitRows);
        pass(batch, outputs, head);
        float[][] logits = new float[n][];
        float[][] hidden = new float[n][];
        for (int j = 0; j < outputs.length; j++) {
            if (wantHidden != null && wantHidden[outputs[j]]) {
                hidden[outputs[j]] = head.normed[j];
            }
        }
        if (logitRows.length > 0) {
            float[][] computed = head.logits.outputs()[0];
            for (int j = 0; j < logitRows.length; j++) {
                logits[outputs[logitRows[j]]] = computed[j];
            }
        }
        return new Output(logits, hidden);
    }

    /**
     * Runs the batch through the model like {@link #forward} with every token an output, and returns each
     * token's final hidden state after the output norm (what llama.cpp returns as embeddings with pooling
     * {@code none}) instead of logits.
     */
    public float[][] hiddenStates(ForwardBatch batch) {
        Head head = new Head(new int[0]);
        pass(batch, IntStream.range(0, batch.size()).toArray(), head);
        return head.normed;
    }

    /**
     * The whole pass over the batch as ONE pool call ({@link PhaseChain}): every block's phases, then the head's;
     * the embedding rows and rope tables are looked up before it.
     */
    private void pass(ForwardBatch batch, int[] outputs, Head head) {
        int n = batch.size();
        float[][] x = new float[n][config.embeddingLength()];
        float[][] tables = new float[n][];
        Map<Integer, float[]> byPosition = new HashMap<>();
        for (int i = 0; i < n; i++) {
            int token = batch.tokens()[i];
            if (token < 0 || token >= embedding.rows()) {
                throw new IllegalArgumentException("token id " + token + " outside vocabulary of " + embedding.rows());
            }
            embedding.dequantizeRow(token, x[i], 0);
            tables[i] = byPosition.computeIfAbsent(batch.positions()[i], rope::table);
        }
        List<PhaseChain.Part> parts = new ArrayList<>();
        for (int b = 0; b < blocks.size(); b++) {
            TransformerBlock.Step step = blocks.get(b).step(batch, tables, x, b == blocks.size() - 1 ? outputs : null);
            parts.add(new PhaseChain.Part(step.phases(), step));
            head.last = step;
        }
        parts.add(new PhaseChain.Part(1, head));
        new PhaseChain(parts).run(parallel);
    }

    /** The output norm of the last block's kept vectors, then (for logits) the output matrix's rows. */
    private final class Head implements PhasedBody {

        /** The kept rows whose logits are wanted. */
        private final int[] logitRows;
        private TransformerBlock.Step last;
        private float[][] normed;
        private Projections logits;

        Head(int[] logitRows) {
            this.logitRows = logitRows;
        }

        @Override
        public int open(int phase) {
            float[][] kept = last.kept();
            normed = new float[kept.length][config.embeddingLength()];
            for (int j = 0; j < kept.length; j++) {
                Numerics.rmsNorm(kept[j], 0, kept[j].length, outputNorm, config.rmsEps(), normed[j], 0);
            }
            if (logitRows.length == 0) {
                return 0;
            }
            float[][] rows = new float[logitRows.length][];
            for (int j = 0; j < rows.length; j++) {
                rows[j] = normed[logitRows[j]];
            }
            logits = new Projections(parallel, new WeightMatrix[] {output}, rows);
            return logits.rows();
        }

        @Override
        public void run(int phase, int from, int to) {
            logits.run(from, to);
        }

        @Override
        public int grain(int phase) {
            return logits.grain();
        }
    }
}

