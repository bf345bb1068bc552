package dev.lazarus.kt.model;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.synthetic.SyntheticModels;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.testsupport.GgufCopies;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The one block description the CPU blocks are assembled from and the GPU layer path uploads from. */
class BlockTensorsTest {

    @TempDir
    Path dir;

    private ModelTensors describe(SyntheticModels.Spec spec) {
        try (GgufFile file = GgufFile.open(SyntheticModels.write(spec, dir.resolve(spec.name() + ".gguf")))) {
            return Model.describe(file);
        }
    }

    @Test
    void deepseek2HasALeadingDenseBlockThenExpertsWithASharedExpertAndLatentAttention() {
        ModelTensors t = describe(SyntheticModels.tinyDeepseek2());
        assertThat(t.blocks()).hasSize(3);
        assertThat(t.block(0).hasExperts()).isFalse();
        assertThat(t.block(0).dense().gate().name()).isEqualTo("blk.0.ffn_gate.weight");
        for (int b = 1; b < 3; b++) {
            BlockTensors.Experts e = t.block(b).experts();
            assertThat(e.router().name()).isEqualTo("blk." + b + ".ffn_gate_inp.weight");
            assertThat(e.routed().down().name()).isEqualTo("blk." + b + ".ffn_down_exps.weight");
            assertThat(e.shared().up().name()).isEqualTo("blk." + b + ".ffn_up_shexp.weight");
            assertThat(e.selectionBias().name()).isEqualTo("blk." + b + ".exp_probs_b.bias");
        }
        BlockTensors.Mla mla = (BlockTensors.Mla) t.block(0).attention();
        assertThat(mla.queryLora()).isTrue();
        assertThat(mla.splitKvB()).isTrue();
        assertThat(t.output().name()).isEqualTo("output.weight");
    }

    @Test
    void qwen3moeRoutesEveryBlockAndLlamaNone() {
        ModelTensors moe = describe(SyntheticModels.tinyQwen3Moe());
        assertThat(moe.blocks()).allMatch(BlockTensors::hasExperts);
        assertThat(moe.blocks()).allMatch(b -> b.experts().shared() == null && b.experts().selectionBias() == null);
        assertThat(((BlockTensors.Gqa) moe.block(0).attention()).qNorm().name()).isEqualTo("blk.0.attn_q_norm.weight");
        ModelTensors dense = describe(SyntheticModels.tinyLlama().withTiedEmbeddings(true));
        assertThat(dense.blocks()).noneMatch(BlockTensors::hasExperts);
        assertThat(dense.output()).isSameAs(dense.embedding());
    }

    @Test
    void glm4moeNormsItsFeedForwardWithThePostAttentionNorm() {
        assertThat(describe(SyntheticModels.tinyGlm4Moe()).block(1).ffnNorm().name())
                .isEqualTo("blk.1.post_attention_norm.weight");
    }

    /**
     * A router tensor in a block the metadata makes dense (leading_dense_block_count) leaves that block dense, as
     * llama.cpp loads it: the description says so, and the model computes what it computes without that tensor.
     * The GPU layer path reads the same description (FakeCudaDriverTest), where it used to look for the router.
     */
    @Test
    void aRouterInALeadingDenseBlockLeavesItDense() {
        Path plain = SyntheticModels.write(SyntheticModels.tinyDeepseek2(), dir.resolve("plain.gguf"));
        Path stray = GgufCopies.withCopiedTensor(plain, dir.resolve("stray.gguf"), "blk.1.ffn_gate_inp.weight",
                "blk.0.ffn_gate_inp.weight");
        try (GgufFile a = GgufFile.open(plain); GgufFile b = GgufFile.open(stray);
             Parallel parallel = Parallel.ofThreads(1)) {
            assertThat(b.findTensor("blk.0.ffn_gate_inp.weight")).isPresent();
            Model withRouter = Model.load(b, parallel);
            assertThat(withRouter.tensors().block(0).hasExperts()).isFalse();
            assertThat(withRouter.expertLayers()).hasSize(2);
            assertThat(logits(withRouter)).isEqualTo(logits(Model.load(a, parallel)));
        }
    }

    private static float[] logits(Model model) {
        KvCache cache = model.newCache(8);
        float[] last = null;
        int[] prompt = {1, 7, 3, 9};
        for (int p = 0; p < prompt.length; p++) {
            cache.ensureCapacity(p + 1);
            last = model.forward(ForwardBatch.single(prompt[p], p, cache))[0];
        }
        return last;
    }

    @Test
    void theModelKeepsTheDescriptionItWasAssembledFrom() {
        Path path = SyntheticModels.write(SyntheticModels.tinyDeepseek2().withWeightType(GgmlType.Q8_0),
                dir.resolve("q8.gguf"));
        try (GgufFile file = GgufFile.open(path); Parallel parallel = Parallel.ofThreads(1)) {
            assertThat(Model.load(file, parallel).tensors()).isEqualTo(Model.describe(file));
        }
    }
}
