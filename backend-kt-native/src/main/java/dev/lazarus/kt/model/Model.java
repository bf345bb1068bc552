package dev.lazarus.kt.model;

import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.tensor.WeightMatrix;
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
        for (int b = 0; b < blocks.size(); b++) {
            keys[b] = blocks.get(b).attention().keyWidth();
            values[b] = blocks.get(b).attention().valueWidth();
        }
        this.kvLayout = new KvLayout(keys, values);
    }

    /** Assembles the model described by the file's metadata from its tensors. */
    public static Model load(GgufFile file, Parallel parallel) {
        return new ModelAssembler(file, parallel).assemble();
    }

    /** Every tensor of {@code file}'s forward pass by block, as {@link #load} assembles them, without loading. */
    public static ModelTensors describe(GgufFile file) {
        return ModelAssembler.describe(file, ModelConfig.fromMetadata(file.metadata()));
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

    public KvLayout kvLayout() {
        return kvLayout;
    }

    public KvCache newCache(int maxPositions) {
        return new KvCache(kvLayout, maxPositions);
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
        int n = batch.size();
        int[] outputs = IntStream.range(0, n).filter(i -> batch.wantLogits()[i]).toArray();
        float[][] normed = finalHiddenStates(batch, outputs);
        float[][] logits = new float[n][];
        if (outputs.length > 0) {
            float[][] computed = Projections.apply(parallel, output, normed);
            for (int j = 0; j < outputs.length; j++) {
                logits[outputs[j]] = computed[j];
            }
        }
        return logits;
    }

    /**
     * Runs the batch through the model like {@link #forward} with every token an output, and returns each
     * token's final hidden state after the output norm (what llama.cpp returns as embeddings with pooling
     * {@code none}) instead of logits.
     */
    public float[][] hiddenStates(ForwardBatch batch) {
        return finalHiddenStates(batch, IntStream.range(0, batch.size()).toArray());
    }

    /** The output-normed hidden states of the tokens at {@code outputs} (ascending). */
    private float[][] finalHiddenStates(ForwardBatch batch, int[] outputs) {
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
        for (TransformerBlock block : blocks.subList(0, blocks.size() - 1)) {
            block.forward(batch, tables, x);
        }
        float[][] last = blocks.getLast().forwardOutputs(batch, tables, x, outputs);
        float[][] normed = new float[outputs.length][config.embeddingLength()];
        for (int j = 0; j < outputs.length; j++) {
            Numerics.rmsNorm(last[j], 0, last[j].length, outputNorm, config.rmsEps(), normed[j], 0);
        }
        return normed;
    }
}
