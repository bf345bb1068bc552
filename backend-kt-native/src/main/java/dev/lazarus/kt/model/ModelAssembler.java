package dev.lazarus.kt.model;

import static dev.lazarus.kt.model.TensorLoader.block;

import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds a {@link Model} from a GGUF: reads the configuration, then picks for every block the
 * attention variant and FFN variant its tensors call for. This is the only place that knows
 * llama.cpp's tensor names.
 */
final class ModelAssembler {

    private final GgufFile file;
    private final Parallel parallel;
    private final TensorLoader tensors;
    private final ModelConfig config;
    private final Rope rope;
    private final List<ExpertLayer> expertLayers = new ArrayList<>();
    private final ExpertDispatch expertDispatch = new ExpertDispatch((layer, experts, inputs) -> {
        throw new IllegalStateException("experts used before the model was assembled");
    });

    ModelAssembler(GgufFile file, Parallel parallel) {
        this.file = file;
        this.parallel = parallel;
        this.tensors = new TensorLoader(file);
        this.config = ModelConfig.fromMetadata(file.metadata());
        this.rope = new Rope(config.rope());
    }

    Model assemble() {
        WeightMatrix embedding = tensors.embedding("token_embd.weight");
        // Tied embeddings: llama.cpp uses token_embd as the output head when there is no output tensor.
        WeightMatrix output = tensors.optionalMatrix("output.weight").orElse(embedding);
        int moeBlocks = 0;
        for (int b = 0; b < config.blockCount(); b++) {
            moeBlocks += hasRoutedExperts(b) ? 1 : 0;
        }
        RoutingStats routing = moeBlocks == 0 ? null : new RoutingStats(moeBlocks, config.moe().expertCount());
        List<TransformerBlock> blocks = new ArrayList<>(config.blockCount());
        for (int b = 0; b < config.blockCount(); b++) {
            blocks.add(new TransformerBlock(
                    tensors.vector(block(b, "attn_norm")),
                    attention(b),
                    ffnNorm(b),
                    feedForward(b, routing),
                    config.rmsEps(),
                    parallel));
        }
        expertDispatch.use(new CpuExperts(parallel, expertLayers));
        return new Model(config, embedding, blocks, tensors.vector("output_norm.weight"), output, rope, routing,
                parallel, expertLayers, expertDispatch);
    }

    private Attention attention(int b) {
        if (config.mla() != null) {
            return latentAttention(b);
        }
        return new GroupedQueryAttention(b, config, new GroupedQueryAttention.Weights(
                tensors.matrix(block(b, "attn_q")),
                tensors.matrix(block(b, "attn_k")),
                tensors.matrix(block(b, "attn_v")),
                tensors.matrix(block(b, "attn_output")),
                optionalVector(bias(b, "attn_q")),
                optionalVector(bias(b, "attn_k")),
                optionalVector(bias(b, "attn_v")),
                optionalVector(bias(b, "attn_output")),
                optionalVector(block(b, "attn_q_norm")),
                optionalVector(block(b, "attn_k_norm")),
                optionalVector(block(b, "attn_sinks"))),
                rope, parallel);
    }

    /**
     * The norm before the feed-forward half: {@code ffn_norm}, or {@code post_attention_norm} as glm4moe and gpt-oss
     * name it (applied at the same place: on the residual stream after attention, before the FFN).
     */
    private float[] ffnNorm(int b) {
        return tensors.optionalVector(block(b, "post_attention_norm")).orElseGet(() -> tensors.vector(block(b, "ffn_norm")));
    }

    private float[] optionalVector(String name) {
        return tensors.optionalVector(name).orElse(null);
    }

    private static String bias(int b, String name) {
        return "blk." + b + "." + name + ".bias";
    }

    private Attention latentAttention(int b) {
        LatentAttention.QueryWeights query = tensors.has(block(b, "attn_q"))
                ? new LatentAttention.QueryWeights(tensors.matrix(block(b, "attn_q")), null, null, null)
                : new LatentAttention.QueryWeights(null,
                        tensors.matrix(block(b, "attn_q_a")),
                        tensors.vector(block(b, "attn_q_a_norm")),
                        tensors.matrix(block(b, "attn_q_b")));
        int heads = config.headCount();
        LatentAttention.LatentWeights latent = tensors.has(block(b, "attn_k_b"))
                ? new LatentAttention.LatentWeights(
                        tensors.slices(block(b, "attn_k_b"), heads),
                        tensors.slices(block(b, "attn_v_b"), heads), null)
                : new LatentAttention.LatentWeights(null, null, tensors.matrix(block(b, "attn_kv_b")));
        return new LatentAttention(b, config, query,
                tensors.matrix(block(b, "attn_kv_a_mqa")),
                tensors.vector(block(b, "attn_kv_a_norm")),
                latent,
                tensors.matrix(block(b, "attn_output")),
                rope, parallel);
    }

    private boolean hasRoutedExperts(int b) {
        return config.moe() != null && config.moe().isMoeBlock(b) && tensors.has(block(b, "ffn_gate_inp"));
    }

    private FeedForward feedForward(int b, RoutingStats routing) {
        MoeConfig moe = config.moe();
        if (!hasRoutedExperts(b)) {
            return dense(b, "ffn_gate", "ffn_up", "ffn_down");
        }
        int slot = expertLayers.size();
        int n = moe.expertCount();
        ExpertMatrix[] gate = tensors.expertSlices(block(b, "ffn_gate_exps"), n);
        ExpertMatrix[] up = tensors.expertSlices(block(b, "ffn_up_exps"), n);
        ExpertMatrix[] down = tensors.expertSlices(block(b, "ffn_down_exps"), n);
        float[][] gateBias = expertBiases(b, "ffn_gate_exps", n);
        float[][] upBias = expertBiases(b, "ffn_up_exps", n);
        float[][] downBias = expertBiases(b, "ffn_down_exps", n);
        Glu.Kind kind = config.architecture() == Architecture.GPT_OSS ? Glu.Kind.SWIGLU_OAI : Glu.Kind.SWIGLU;
        List<ExpertWeights> experts = new ArrayList<>(n);
        for (int e = 0; e < n; e++) {
            Glu glu = kind == Glu.Kind.SWIGLU && gateBias == null && upBias == null && downBias == null ? Glu.SWIGLU
                    : new Glu(kind, row(gateBias, e), row(upBias, e), row(downBias, e));
            experts.add(new ExpertWeights(gate[e], up[e], down[e], glu));
        }
        expertLayers.add(new ExpertLayer(b, experts));
        FeedForward shared = tensors.has(block(b, "ffn_gate_shexp"))
                ? dense(b, "ffn_gate_shexp", "ffn_up_shexp", "ffn_down_shexp")
                : null;
        ExpertRouter router = new ExpertRouter(moe, optionalVector(bias(b, "ffn_gate_inp")),
                optionalVector(bias(b, "exp_probs_b")));
        return new MoeFeedForward(tensors.matrix(block(b, "ffn_gate_inp")), router, b, n,
                expertDispatch, shared, parallel, routing, slot);
    }

    /** A {@code [rows, experts]} bias tensor ({@code blk.N.ffn_up_exps.bias}, gpt-oss) split by expert; null if absent. */
    private float[][] expertBiases(int b, String name, int experts) {
        float[] all = optionalVector(bias(b, name));
        if (all == null) {
            return null;
        }
        if (all.length % experts != 0) {
            throw new ModelFormatException(bias(b, name) + " has " + all.length + " values for " + experts + " experts");
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

    private FeedForward dense(int b, String gate, String up, String down) {
        return new DenseFeedForward(new SwiGlu.Weights(
                tensors.matrix(block(b, gate)), tensors.matrix(block(b, up)), tensors.matrix(block(b, down))), parallel);
    }
}
