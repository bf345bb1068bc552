package dev.lazarus.kt.model;

import static dev.lazarus.kt.model.TensorLoader.block;

import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.tensor.Parallel;
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
        WeightMatrix embedding = tensors.matrix("token_embd.weight");
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
                    tensors.vector(block(b, "ffn_norm")),
                    feedForward(b, routing),
                    config.rmsEps()));
        }
        expertDispatch.use(new CpuExperts(parallel, expertLayers));
        return new Model(config, embedding, blocks, tensors.vector("output_norm.weight"), output, rope, routing,
                parallel, expertLayers, expertDispatch);
    }

    private Attention attention(int b) {
        if (config.mla() != null) {
            return latentAttention(b);
        }
        return new GroupedQueryAttention(b, config,
                tensors.matrix(block(b, "attn_q")),
                tensors.matrix(block(b, "attn_k")),
                tensors.matrix(block(b, "attn_v")),
                tensors.matrix(block(b, "attn_output")),
                tensors.optionalVector(block(b, "attn_q_norm")).orElse(null),
                tensors.optionalVector(block(b, "attn_k_norm")).orElse(null),
                rope, parallel);
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
        List<ExpertWeights> experts = new ArrayList<>(n);
        for (int e = 0; e < n; e++) {
            experts.add(new ExpertWeights(gate[e], up[e], down[e]));
        }
        expertLayers.add(new ExpertLayer(b, experts));
        FeedForward shared = tensors.has(block(b, "ffn_gate_shexp"))
                ? dense(b, "ffn_gate_shexp", "ffn_up_shexp", "ffn_down_shexp")
                : null;
        float[] bias = tensors.optionalVector("blk." + b + ".exp_probs_b.bias").orElse(null);
        return new MoeFeedForward(tensors.matrix(block(b, "ffn_gate_inp")), new ExpertRouter(moe, bias), b, n,
                expertDispatch, shared, parallel, routing, slot);
    }

    private FeedForward dense(int b, String gate, String up, String down) {
        return new DenseFeedForward(new SwiGlu.Weights(
                tensors.matrix(block(b, gate)), tensors.matrix(block(b, up)), tensors.matrix(block(b, down))), parallel);
    }
}
