package dev.lazarus.kt.model;

import dev.lazarus.kt.tensor.GgmlOrders;
import dev.lazarus.kt.tensor.KernelConfig;
import dev.lazarus.kt.matrix.WeightMatrices;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.gguf.GgufTensorInfo;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds a {@link Model} from a GGUF: reads the configuration, describes every block once
 * ({@link #describe}: the attention variant and FFN variant its tensors call for, as {@link BlockTensors}),
 * then assembles the CPU blocks from those descriptions; the GPU layer path uploads from the same ones. This
 * is the only place that knows llama.cpp's tensor names.
 */
final class ModelAssembler {

    private final GgufFile file;
    private final Parallel parallel;
    private final AttentionOrder order;
    private final GgmlOrders kvOrders;
    private final TensorLoader tensors;
    private final ModelConfig config;
    private final Rope rope;
    private final DeltaNetConfig deltaNet;
    private final SharedSelection sharedSelection = new SharedSelection();
    private final List<ExpertLayer> expertLayers = new ArrayList<>();
    private final ExpertDispatch expertDispatch = new ExpertDispatch((layer, experts, inputs) -> {
        throw new IllegalStateException("experts used before the model was assembled");
    });

    ModelAssembler(GgufFile file, Parallel parallel, KernelConfig kernels, AttentionOrder order) {
        this.file = file;
        this.parallel = parallel;
        this.order = order;
        this.kvOrders = kernels.orders();
        this.tensors = new TensorLoader(file, WeightMatrices.with(kernels));
        this.config = ModelConfig.fromMetadata(file.metadata());
        this.rope = new Rope(config.rope());
        this.deltaNet = DeltaNetConfig.fromMetadata(Metadata.of(file.metadata()));
    }

    /** Every tensor of {@code file}'s forward pass, by block (see {@link BlockTensors}). */
    static ModelTensors describe(GgufFile file, ModelConfig config) {
        List<BlockTensors> blocks = new ArrayList<>(config.blockCount());
        DeltaNetConfig deltaNet = DeltaNetConfig.fromMetadata(Metadata.of(file.metadata()));
        for (int b = 0; b < config.blockCount(); b++) {
            blocks.add(describeBlock(file, config, deltaNet, b));
        }
        GgufTensorInfo embedding = file.tensor("token_embd.weight");
        // Tied embeddings: llama.cpp uses token_embd as the output head when there is no output tensor.
        GgufTensorInfo output = file.findTensor("output.weight").orElse(embedding);
        return new ModelTensors(embedding, blocks, file.tensor("output_norm.weight"), output);
    }

    private static BlockTensors describeBlock(GgufFile file, ModelConfig config, DeltaNetConfig deltaNet, int b) {
        return new BlockTensors(b, file.tensor(block(b, "attn_norm")),
                deltaNet != null && deltaNet.isRecurrent(b) ? deltaNet(file, b)
                        : config.mla() != null ? latentAttention(file, config, b) : groupedQueryAttention(file, b),
                ffnNorm(file, b),
                hasRoutedExperts(file, config, b) ? null : swiGlu(file, b, ""),
                hasRoutedExperts(file, config, b) ? experts(file, b) : null);
    }

    /**
     * The norm before the feed-forward half: {@code ffn_norm}, or {@code post_attention_norm} as glm4moe and gpt-oss
     * name it (applied at the same place: on the residual stream after attention, before the FFN).
     */
    private static GgufTensorInfo ffnNorm(GgufFile file, int b) {
        GgufTensorInfo postAttention = optional(file, block(b, "post_attention_norm"));
        return postAttention != null ? postAttention : file.tensor(block(b, "ffn_norm"));
    }

    /** The leading dense blocks (deepseek2, glm4moe) are dense by the metadata even where a router tensor exists. */
    private static boolean hasRoutedExperts(GgufFile file, ModelConfig config, int b) {
        return config.moe() != null && config.moe().isMoeBlock(b) && file.findTensor(block(b, "ffn_gate_inp")).isPresent();
    }

    private static BlockTensors.Gqa groupedQueryAttention(GgufFile file, int b) {
        return new BlockTensors.Gqa(file.tensor(block(b, "attn_q")), file.tensor(block(b, "attn_k")),
                file.tensor(block(b, "attn_v")), file.tensor(block(b, "attn_output")),
                optional(file, bias(b, "attn_q")), optional(file, bias(b, "attn_k")),
                optional(file, bias(b, "attn_v")), optional(file, bias(b, "attn_output")),
                optional(file, block(b, "attn_q_norm")), optional(file, block(b, "attn_k_norm")),
                optional(file, block(b, "attn_sinks")));
    }

    /**
     * qwen35moe's tensors, or qwen3next's: one {@code ssm_ba} projection for beta and alpha, and in GGUFs converted
     * before llama.cpp split it, one {@code ssm_in} for queries, keys, values and z (then {@code gate} is null).
     */
    private static BlockTensors.DeltaNet deltaNet(GgufFile file, int b) {
        GgufTensorInfo betaAlpha = optional(file, block(b, "ssm_ba"));
        GgufTensorInfo fused = file.findTensor(block(b, "attn_qkv")).isEmpty() ? optional(file, block(b, "ssm_in")) : null;
        return new BlockTensors.DeltaNet(fused != null ? fused : file.tensor(block(b, "attn_qkv")),
                fused != null ? null : file.tensor(block(b, "attn_gate")),
                file.tensor(block(b, "ssm_conv1d")), file.tensor(bias(b, "ssm_dt")), file.tensor("blk." + b + ".ssm_a"),
                betaAlpha != null ? betaAlpha : file.tensor(block(b, "ssm_beta")),
                betaAlpha != null ? null : file.tensor(block(b, "ssm_alpha")), file.tensor(block(b, "ssm_norm")),
                file.tensor(block(b, "ssm_out")));
    }

    private static BlockTensors.Mla latentAttention(GgufFile file, ModelConfig config, int b) {
        GgufTensorInfo q = optional(file, block(b, "attn_q"));
        boolean split = file.findTensor(block(b, "attn_k_b")).isPresent();
        BlockTensors.Indexer indexer = null;
        if (config.architecture().sparseAttention()) {
            if (config.mla().indexer() == null || !split || q != null) {
                throw new ModelFormatException(config.architecture().ggufName()
                        + " needs the attention.indexer.* keys, attn_q_a/attn_q_b and"
                        + " split attn_k_b/attn_v_b (as llama.cpp loads it)");
            }
            if (config.mla().indexer().runsOwn(b)) { // GLM-5.2's sharing blocks read none
                indexer = new BlockTensors.Indexer(file.tensor(block(b, "indexer.attn_q_b")),
                        file.tensor(block(b, "indexer.attn_k")), file.tensor(block(b, "indexer.k_norm")),
                        file.tensor(bias(b, "indexer.k_norm")), file.tensor(block(b, "indexer.proj")));
            }
        }
        return new BlockTensors.Mla(q,
                q != null ? null : file.tensor(block(b, "attn_q_a")),
                q != null ? null : file.tensor(block(b, "attn_q_a_norm")),
                q != null ? null : file.tensor(block(b, "attn_q_b")),
                file.tensor(block(b, "attn_kv_a_mqa")), file.tensor(block(b, "attn_kv_a_norm")),
                split ? file.tensor(block(b, "attn_k_b")) : null,
                split ? file.tensor(block(b, "attn_v_b")) : null,
                split ? null : file.tensor(block(b, "attn_kv_b")),
                file.tensor(block(b, "attn_output")), indexer);
    }

    private static BlockTensors.Experts experts(GgufFile file, int b) {
        BlockTensors.SwiGluTensors shared = file.findTensor(block(b, "ffn_gate_shexp")).isPresent()
                ? swiGlu(file, b, "_shexp") : null;
        return new BlockTensors.Experts(file.tensor(block(b, "ffn_gate_inp")), optional(file, bias(b, "ffn_gate_inp")),
                optional(file, bias(b, "exp_probs_b")), swiGlu(file, b, "_exps"),
                optional(file, bias(b, "ffn_gate_exps")), optional(file, bias(b, "ffn_up_exps")),
                optional(file, bias(b, "ffn_down_exps")), shared, optional(file, block(b, "ffn_gate_inp_shexp")));
    }

    private static BlockTensors.SwiGluTensors swiGlu(GgufFile file, int b, String suffix) {
        return new BlockTensors.SwiGluTensors(file.tensor(block(b, "ffn_gate" + suffix)),
                file.tensor(block(b, "ffn_up" + suffix)), file.tensor(block(b, "ffn_down" + suffix)));
    }

    private static GgufTensorInfo optional(GgufFile file, String name) {
        return file.findTensor(name).orElse(null);
    }

    private static String block(int b, String name) {
        return "blk." + b + "." + name + ".weight";
    }

    private static String bias(int b, String name) {
        return "blk." + b + "." + name + ".bias";
    }

    Model assemble() {
        ModelTensors described = describe(file, config);
        WeightMatrix embedding = tensors.embedding(described.embedding());
        WeightMatrix output = described.output() == described.embedding() ? embedding : tensors.matrix(described.output());
        int moeBlocks = 0;
        for (BlockTensors b : described.blocks()) {
            moeBlocks += b.hasExperts() ? 1 : 0;
        }
        RoutingStats routing = moeBlocks == 0 ? null : new RoutingStats(moeBlocks, config.moe().expertCount());
        List<TransformerBlock> blocks = new ArrayList<>(config.blockCount());
        for (BlockTensors b : described.blocks()) {
            blocks.add(new TransformerBlock(
                    tensors.vector(b.attnNorm()),
                    attention(b),
                    tensors.vector(b.ffnNorm()),
                    b.hasExperts() ? experts(b.index(), b.experts(), routing) : dense(b.dense()),
                    config.rmsEps(),
                    parallel));
        }
        expertDispatch.use(new CpuExperts(parallel, expertLayers));
        Model model = new Model(config, described, embedding, blocks, tensors.vector(described.outputNorm()), output,
                rope, routing, parallel, expertLayers, expertDispatch);
        model.useKvOrders(kvOrders);
        model.useMtp(nextn(embedding, output, tensors.vector(described.outputNorm())));
        return model;
    }

    /**
     * The first NextN block after the model's own (the one llama.cpp's {@code draft-mtp} drafts with), with its own
     * expert dispatch on the CPU; null where the file has none.
     */
    private MtpBlock nextn(WeightMatrix embedding, WeightMatrix output, float[] outputNorm) {
        if (Metadata.of(file.metadata()).integer("nextn_predict_layers", 0) == 0) {
            return null;
        }
        int b = config.blockCount();
        BlockTensors t = describeBlock(file, config, deltaNet, b);
        List<ExpertLayer> own = new ArrayList<>(1);
        ExpertDispatch dispatch = new ExpertDispatch((layer, experts, inputs) -> {
            throw new IllegalStateException("experts used before the NextN block was assembled");
        });
        FeedForward ffn = t.hasExperts()
                ? experts(b, t.experts(), new RoutingStats(1, config.moe().expertCount()), own, dispatch)
                : dense(t.dense());
        dispatch.use(new CpuExperts(parallel, own));
        TransformerBlock block = new TransformerBlock(tensors.vector(t.attnNorm()), attention(t),
                tensors.vector(t.ffnNorm()), ffn, config.rmsEps(), parallel);
        GgufTensorInfo ownEmbedding = optional(file, "blk." + b + ".nextn.embed_tokens.weight");
        GgufTensorInfo ownHead = optional(file, "blk." + b + ".nextn.shared_head_head.weight");
        GgufTensorInfo headNorm = optional(file, "blk." + b + ".nextn.shared_head_norm.weight");
        return new MtpBlock(block, b, ownEmbedding != null ? tensors.embedding(ownEmbedding) : embedding,
                tensors.vector(file.tensor("blk." + b + ".nextn.enorm.weight")),
                tensors.vector(file.tensor("blk." + b + ".nextn.hnorm.weight")),
                tensors.matrix(file.tensor("blk." + b + ".nextn.eh_proj.weight")),
                headNorm != null ? tensors.vector(headNorm) : outputNorm,
                ownHead != null ? tensors.matrix(ownHead) : output, rope, config.rmsEps(), config.embeddingLength(),
                parallel, kvOrders);
    }

    private Attention attention(BlockTensors block) {
        int b = block.index();
        return switch (block.attention()) {
            case BlockTensors.Gqa a -> new GroupedQueryAttention(b, config, new GroupedQueryAttention.Weights(
                    tensors.matrix(a.q()), tensors.matrix(a.k()), tensors.matrix(a.v()), tensors.matrix(a.output()),
                    tensors.vector(a.qBias()), tensors.vector(a.kBias()), tensors.vector(a.vBias()),
                    tensors.vector(a.outputBias()), tensors.vector(a.qNorm()), tensors.vector(a.kNorm()),
                    tensors.vector(a.sinks())),
                    rope, order, parallel);
            case BlockTensors.Mla a -> latentAttention(b, a);
            case BlockTensors.DeltaNet a -> new GatedDeltaNet(b, deltaNet, new GatedDeltaNet.Weights(
                    tensors.matrix(a.qkv()), a.gate() == null ? null : tensors.matrix(a.gate()), tensors.vector(a.conv()),
                    tensors.vector(a.dtBias()), tensors.vector(a.a()), tensors.matrix(a.beta()),
                    a.alpha() == null ? null : tensors.matrix(a.alpha()), tensors.vector(a.norm()),
                    tensors.matrix(a.output())),
                    config.rmsEps(), parallel);
        };
    }

    private Attention latentAttention(int b, BlockTensors.Mla a) {
        LatentAttention.QueryWeights query = !a.queryLora()
                ? new LatentAttention.QueryWeights(tensors.matrix(a.q()), null, null, null)
                : new LatentAttention.QueryWeights(null, tensors.matrix(a.qA()), tensors.vector(a.qANorm()),
                        tensors.matrix(a.qB()));
        int heads = config.headCount();
        LatentAttention.LatentWeights latent = a.splitKvB()
                ? new LatentAttention.LatentWeights(tensors.slices(a.kB(), heads), tensors.slices(a.vB(), heads), null)
                : new LatentAttention.LatentWeights(null, null, tensors.matrix(a.kvB()));
        SharedSelection shared = config.mla().indexer() != null && config.mla().indexer().shares()
                ? sharedSelection : null;
        LightningIndexer indexer = a.indexer() == null ? null : new LightningIndexer(config.mla().indexer(),
                new LightningIndexer.Weights(tensors.matrix(a.indexer().qB()), tensors.matrix(a.indexer().k()),
                        tensors.vector(a.indexer().kNorm()), tensors.vector(a.indexer().kNormBias()),
                        tensors.matrix(a.indexer().proj())), rope, config.architecture().indexerRopeStyle(),
                config.architecture().indexerNormEps(), parallel);
        return new LatentAttention(b, config, query, tensors.matrix(a.kvAMqa()), tensors.vector(a.kvANorm()), latent,
                tensors.matrix(a.output()), rope, order, parallel, indexer, shared);
    }

    private FeedForward experts(int b, BlockTensors.Experts t, RoutingStats routing) {
        return experts(b, t, routing, expertLayers, expertDispatch);
    }

    private FeedForward experts(int b, BlockTensors.Experts t, RoutingStats routing, List<ExpertLayer> layers,
                                ExpertDispatch dispatch) {
        MoeConfig moe = config.moe();
        int slot = layers.size();
        int n = moe.expertCount();
        ExpertMatrix[] gate = tensors.expertSlices(t.routed().gate(), n);
        ExpertMatrix[] up = tensors.expertSlices(t.routed().up(), n);
        ExpertMatrix[] down = tensors.expertSlices(t.routed().down(), n);
        float[][] gateBias = expertBiases(t.gateBias(), n);
        float[][] upBias = expertBiases(t.upBias(), n);
        float[][] downBias = expertBiases(t.downBias(), n);
        Glu.Kind kind = config.architecture() == Architecture.GPT_OSS ? Glu.Kind.SWIGLU_OAI : Glu.Kind.SWIGLU;
        List<ExpertWeights> experts = new ArrayList<>(n);
        for (int e = 0; e < n; e++) {
            Glu glu = kind == Glu.Kind.SWIGLU && gateBias == null && upBias == null && downBias == null ? Glu.SWIGLU
                    : new Glu(kind, row(gateBias, e), row(upBias, e), row(downBias, e));
            experts.add(new ExpertWeights(gate[e], up[e], down[e], glu));
        }
        layers.add(new ExpertLayer(b, experts));
        FeedForward shared = t.shared() == null ? null : dense(t.shared());
        ExpertRouter router = new ExpertRouter(moe, tensors.vector(t.routerBias()), tensors.vector(t.selectionBias()));
        return new MoeFeedForward(tensors.matrix(t.router()), router, b, n,
                dispatch, shared, tensors.vector(t.sharedGate()), parallel, routing, slot);
    }

    /** A {@code [rows, experts]} bias tensor ({@code blk.N.ffn_up_exps.bias}, gpt-oss) split by expert; null if absent. */
    private float[][] expertBiases(GgufTensorInfo tensor, int experts) {
        float[] all = tensors.vector(tensor);
        if (all == null) {
            return null;
        }
        if (all.length % experts != 0) {
            throw new ModelFormatException(tensor.name() + " has " + all.length + " values for " + experts + " experts");
        }
        int rows = all.length / experts;
        float[][] out = new float[experts][];
        for (int e = 0; e < experts; e++) {
            out[e] = java.util.Arrays.copyOfRange(all, e * rows, (e + 1) * rows);
        }
        return out;
    }

    private static float[] row(float[][] rows, int e) {
        return rows == null ? null : rows[e];
    }

    private FeedForward dense(BlockTensors.SwiGluTensors t) {
        return new DenseFeedForward(new SwiGlu.Weights(
                tensors.matrix(t.gate()), tensors.matrix(t.up()), tensors.matrix(t.down())), parallel);
    }
}
