package dev.lazarus.kt.synthetic;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.gguf.GgufTensorInfo;
import dev.lazarus.kt.synthetic.SyntheticModels.Mla;
import dev.lazarus.kt.synthetic.SyntheticModels.Moe;
import dev.lazarus.kt.synthetic.SyntheticModels.Spec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SyntheticModelsTest {

    @TempDir
    Path dir;

    @Test
    void sameSpecWritesTheSameBytesAndAnotherSeedOthers() throws IOException {
        Spec spec = SyntheticModels.tinyLlama();
        Path a = SyntheticModels.write(spec, dir.resolve("a.gguf"));
        Path b = SyntheticModels.write(spec, dir.resolve("b.gguf"));
        Path c = SyntheticModels.write(spec.withSeed(99), dir.resolve("c.gguf"));
        assertThat(Files.mismatch(a, b)).isEqualTo(-1);
        assertThat(Files.mismatch(a, c)).isNotEqualTo(-1);
        assertThat(Files.size(a)).isEqualTo(Files.size(c));
    }

    @Test
    void qwen3MoeHasQkNormsRouterAndExpertsWithTheirHyperParameters() {
        Spec spec = SyntheticModels.tinyQwen3Moe();
        try (GgufFile f = GgufFile.open(SyntheticModels.write(spec, dir.resolve("q.gguf")))) {
            assertThat(f.architecture()).isEqualTo("qwen3moe");
            assertThat(f.integer("qwen3moe.expert_count")).isEqualTo(8);
            assertThat(f.integer("qwen3moe.expert_used_count")).isEqualTo(2);
            assertThat(f.integer("qwen3moe.expert_feed_forward_length")).isEqualTo(256);
            assertThat(f.integer("qwen3moe.attention.key_length")).isEqualTo(64);
            assertThat(f.tensor("blk.1.attn_q_norm.weight").shape()).containsExactly(64);
            assertThat(f.tensor("blk.1.ffn_gate_inp.weight").shape()).containsExactly(256, 8);
            assertThat(f.tensor("blk.1.ffn_down_exps.weight").shape()).containsExactly(256, 256, 8);
            assertThat(f.string("general.description")).contains("RANDOM weights");
            assertThat(f.tensors().stream().mapToLong(GgufTensorInfo::elements).sum()).isEqualTo(spec.parameterCount());
        }
    }

    @Test
    void glm4MoeHasAttentionBiasesPartialRopePostAttentionNormAndDeepseekRouting() {
        Spec spec = SyntheticModels.tinyGlm4Moe();
        try (GgufFile f = GgufFile.open(SyntheticModels.write(spec, dir.resolve("glm.gguf")))) {
            assertThat(f.architecture()).isEqualTo("glm4moe");
            assertThat(f.integer("glm4moe.rope.dimension_count")).isEqualTo(64);
            assertThat(f.integer("glm4moe.attention.key_length")).isEqualTo(128);
            assertThat(f.integer("glm4moe.leading_dense_block_count")).isEqualTo(1);
            assertThat(f.integer("glm4moe.expert_gating_func")).isEqualTo(2);
            assertThat(f.tensor("blk.0.attn_q.bias").shape()).containsExactly(4 * 128);
            assertThat(f.tensor("blk.0.attn_k.bias").shape()).containsExactly(2 * 128);
            assertThat(f.tensor("blk.0.post_attention_norm.weight").shape()).containsExactly(256);
            assertThat(f.findTensor("blk.0.ffn_norm.weight")).isEmpty();
            assertThat(f.tensor("blk.0.ffn_gate.weight").shape()).containsExactly(256, 512);
            assertThat(f.tensor("blk.1.exp_probs_b.bias").shape()).containsExactly(8);
            assertThat(f.tensor("blk.1.ffn_gate_shexp.weight").shape()).containsExactly(256, 256);
            // GLM-4.5's NextN block after the three: counted in block_count, left out by the forward pass
            assertThat(f.integer("glm4moe.block_count")).isEqualTo(4);
            assertThat(f.integer("glm4moe.nextn_predict_layers")).isEqualTo(1);
            assertThat(f.tensor("blk.3.nextn.eh_proj.weight").shape()).containsExactly(512, 256);
            assertThat(f.tensor("blk.3.ffn_up_exps.weight").shape()).containsExactly(256, 256, 8);
            assertThat(f.tensors().stream().mapToLong(GgufTensorInfo::elements).sum()).isEqualTo(spec.parameterCount());
        }
    }

    @Test
    void glmDsaHasDeepseek32sIndexerGlmsRoutingAndANextnBlock() {
        Spec spec = SyntheticModels.tinyGlmDsa();
        try (GgufFile f = GgufFile.open(SyntheticModels.write(spec, dir.resolve("glm-dsa.gguf")))) {
            assertThat(f.architecture()).isEqualTo("glm-dsa");
            assertThat(f.integer("glm-dsa.attention.indexer.top_k")).isEqualTo(10);
            assertThat(f.integer("glm-dsa.attention.indexer.key_length")).isEqualTo(64);
            assertThat(f.integer("glm-dsa.expert_gating_func")).isEqualTo(2);
            // under GLM-5.2's million tokens, so llama.cpp gives every block its own indexer
            assertThat(f.integer("glm-dsa.context_length")).isLessThan(1 << 20);
            assertThat(f.tensor("blk.0.indexer.attn_q_b.weight").shape()).containsExactly(128, 8 * 64);
            assertThat(f.tensor("blk.2.indexer.proj.weight").shape()).containsExactly(256, 8);
            assertThat(f.tensor("blk.1.exp_probs_b.bias").shape()).containsExactly(8);
            assertThat(f.integer("glm-dsa.block_count")).isEqualTo(4);
            assertThat(f.integer("glm-dsa.nextn_predict_layers")).isEqualTo(1);
            assertThat(f.tensor("blk.3.nextn.eh_proj.weight").shape()).containsExactly(512, 256);
            assertThat(f.tensors().stream().mapToLong(GgufTensorInfo::elements).sum()).isEqualTo(spec.parameterCount());
        }
        assertThatThrownBy(() -> spec.withMla(spec.mla().withIndexer(null))).hasMessageContaining("glm-dsa needs an indexer");
    }

    @Test
    void minimaxM2NormsTheWholeQueryAndKeyProjectionAndRoutesWithoutASharedExpert() {
        Spec spec = SyntheticModels.tinyMinimaxM2();
        try (GgufFile f = GgufFile.open(SyntheticModels.write(spec, dir.resolve("minimax.gguf")))) {
            assertThat(f.architecture()).isEqualTo("minimax-m2");
            assertThat(f.integer("minimax-m2.rope.dimension_count")).isEqualTo(64);
            assertThat(f.integer("minimax-m2.attention.key_length")).isEqualTo(128);
            assertThat(f.integer("minimax-m2.expert_gating_func")).isEqualTo(2);
            assertThat(f.integer("minimax-m2.expert_feed_forward_length")).isEqualTo(f.integer("minimax-m2.feed_forward_length"));
            // one norm over all heads: 4 query heads and 2 KV heads of 128
            assertThat(f.tensor("blk.0.attn_q_norm.weight").shape()).containsExactly(4 * 128);
            assertThat(f.tensor("blk.0.attn_k_norm.weight").shape()).containsExactly(2 * 128);
            assertThat(f.tensor("blk.0.exp_probs_b.bias").shape()).containsExactly(8);
            assertThat(f.tensor("blk.0.ffn_norm.weight").shape()).containsExactly(256);
            assertThat(f.findTensor("blk.0.ffn_gate_shexp.weight")).isEmpty();
            assertThat(f.findTensor("blk.0.ffn_gate.weight")).isEmpty();
            assertThat(f.tensors().stream().mapToLong(GgufTensorInfo::elements).sum()).isEqualTo(spec.parameterCount());
        }
    }

    @Test
    void qwen3nextHasOneBetaAlphaProjectionNoRopeSectionsAndOnRequestTheFusedInput() {
        Spec spec = SyntheticModels.tinyQwen3Next();
        try (GgufFile f = GgufFile.open(SyntheticModels.write(spec, dir.resolve("qwen3next.gguf")))) {
            assertThat(f.architecture()).isEqualTo("qwen3next");
            assertThat(f.metadata()).doesNotContainKey("qwen3next.rope.dimension_sections");
            // 2 key heads, 4 value heads of 64: per value head a beta and an alpha
            assertThat(f.tensor("blk.0.ssm_ba.weight").shape()).containsExactly(256, 8);
            assertThat(f.findTensor("blk.0.ssm_beta.weight")).isEmpty();
            assertThat(f.tensor("blk.0.attn_qkv.weight").shape()).containsExactly(256, 2 * 128 + 256);
            assertThat(f.tensor("blk.1.attn_q.weight").shape()).containsExactly(256, 4 * 2 * 64);
            assertThat(f.tensor("blk.0.ffn_gate_inp_shexp.weight").shape()).containsExactly(256);
            assertThat(f.tensors().stream().mapToLong(GgufTensorInfo::elements).sum()).isEqualTo(spec.parameterCount());
        }
        Spec fused = spec.withDeltaNet(spec.deltaNet().withFusedInput());
        try (GgufFile f = GgufFile.open(SyntheticModels.write(fused, dir.resolve("qwen3next-ssm-in.gguf")))) {
            assertThat(f.tensor("blk.0.ssm_in.weight").shape()).containsExactly(256, 2 * 128 + 2 * 256);
            assertThat(f.findTensor("blk.0.attn_qkv.weight")).isEmpty();
            assertThat(f.findTensor("blk.0.attn_gate.weight")).isEmpty();
            assertThat(f.tensors().stream().mapToLong(GgufTensorInfo::elements).sum()).isEqualTo(spec.parameterCount());
        }
        Spec qwen35 = SyntheticModels.tinyQwen35Moe();
        assertThatThrownBy(() -> qwen35.withDeltaNet(qwen35.deltaNet().withFusedInput()))
                .hasMessageContaining("qwen35moe has no fused ssm_in");
    }

    @Test
    void gptOssHasSinksSlidingWindowAndBiasesKeptInF32() {
        Spec spec = SyntheticModels.tinyGptOss().withWeightType(GgmlType.Q8_0);
        try (GgufFile f = GgufFile.open(SyntheticModels.write(spec, dir.resolve("oss.gguf")))) {
            assertThat(f.architecture()).isEqualTo("gpt-oss");
            assertThat(f.integer("gpt-oss.attention.sliding_window")).isEqualTo(16);
            assertThat(f.tensor("blk.0.attn_sinks.weight").shape()).containsExactly(4);
            assertThat(f.tensor("blk.0.attn_output.bias").shape()).containsExactly(256);
            assertThat(f.tensor("blk.0.ffn_gate_inp.bias").shape()).containsExactly(8);
            assertThat(f.tensor("blk.0.ffn_up_exps.bias").shape()).containsExactly(256, 8);
            assertThat(f.tensor("blk.0.ffn_up_exps.bias").type()).isEqualTo(GgmlType.F32);
            assertThat(f.tensor("blk.0.ffn_up_exps.weight").type()).isEqualTo(GgmlType.Q8_0);
            assertThat(f.tensor("blk.0.post_attention_norm.weight").type()).isEqualTo(GgmlType.F32);
        }
    }

    @Test
    void quantizedModelsKeepNormsAndRouterInF32() {
        Spec spec = SyntheticModels.tinyQwen3Moe().withWeightType(GgmlType.Q8_0);
        try (GgufFile f = GgufFile.open(SyntheticModels.write(spec, dir.resolve("q8.gguf")))) {
            assertThat(f.integer("general.file_type")).isEqualTo(7);
            assertThat(f.tensor("blk.0.ffn_up_exps.weight").type()).isEqualTo(GgmlType.Q8_0);
            assertThat(f.tensor("token_embd.weight").type()).isEqualTo(GgmlType.Q8_0);
            assertThat(f.tensor("blk.0.ffn_gate_inp.weight").type()).isEqualTo(GgmlType.F32);
            assertThat(f.tensor("blk.0.attn_norm.weight").type()).isEqualTo(GgmlType.F32);
        }
    }

    @Test
    void deepseek2HasLatentAttentionDenseLeadSharedExpertGroupsAndYarn() {
        Spec spec = SyntheticModels.tinyDeepseek2();
        try (GgufFile f = GgufFile.open(SyntheticModels.write(spec, dir.resolve("ds.gguf")))) {
            assertThat(f.integer("deepseek2.leading_dense_block_count")).isEqualTo(1);
            assertThat(f.integer("deepseek2.expert_gating_func")).isEqualTo(2);
            assertThat(f.integer("deepseek2.expert_group_count")).isEqualTo(4);
            assertThat(f.integer("deepseek2.attention.head_count_kv")).isEqualTo(1);
            assertThat(f.integer("deepseek2.attention.key_length_mla")).isEqualTo(96);
            assertThat(f.string("deepseek2.rope.scaling.type")).isEqualTo("yarn");
            assertThat(f.findTensor("blk.0.ffn_gate_inp.weight")).isEmpty();
            assertThat(f.tensor("blk.0.ffn_gate.weight").shape()).containsExactly(256, 512);
            assertThat(f.tensor("blk.1.exp_probs_b.bias").shape()).containsExactly(8);
            assertThat(f.tensor("blk.1.ffn_up_shexp.weight").shape()).containsExactly(256, 256);
            assertThat(f.tensor("blk.2.attn_k_b.weight").shape()).containsExactly(64, 128, 4);
            assertThat(f.tensor("blk.2.attn_v_b.weight").shape()).containsExactly(128, 64, 4);
            assertThat(f.findTensor("blk.2.attn_kv_b.weight")).isEmpty();
        }
    }

    @Test
    void splitKAndVbAreExactReLayoutsOfTheFusedKvbOfTheSameSeed() {
        Spec split = SyntheticModels.tinyDeepseek2();
        Mla mla = split.mla();
        Spec fused = split.withMla(mla.withSplitKvB(false));
        try (GgufFile s = GgufFile.open(SyntheticModels.write(split, dir.resolve("split.gguf")));
             GgufFile u = GgufFile.open(SyntheticModels.write(fused, dir.resolve("fused.gguf")))) {
            assertThat(u.integer("deepseek2.attention.head_count_kv")).isEqualTo(4);
            assertThat(u.metadata()).doesNotContainKey("deepseek2.attention.key_length_mla");
            float[] kvB = floats(u, "blk.1.attn_kv_b.weight");   // [kv_lora=128] x rows h*(64+64)+j
            float[] kB = floats(s, "blk.1.attn_k_b.weight");     // per head [nope=64] x rows kv_lora
            float[] vB = floats(s, "blk.1.attn_v_b.weight");     // per head [kv_lora] x rows v=64
            int r = mla.kvLoraRank(), nope = mla.qkNopeDim(), v = mla.vHeadDim();
            for (int h = 0; h < split.heads(); h++) {
                for (int c = 0; c < r; c += 7) {
                    for (int j = 0; j < nope; j += 5) {
                        assertThat(kB[(h * r + c) * nope + j]).isEqualTo(kvB[(h * (nope + v) + j) * r + c]);
                    }
                    for (int j = 0; j < v; j += 5) {
                        assertThat(vB[(h * v + j) * r + c]).isEqualTo(kvB[(h * (nope + v) + nope + j) * r + c]);
                    }
                }
            }
            assertThat(floats(s, "blk.1.attn_q_b.weight")).isEqualTo(floats(u, "blk.1.attn_q_b.weight"));
        }
    }

    @Test
    void benchmarkPresetIsBigEnoughToMeasureKernels() {
        Spec bench = SyntheticModels.benchQwen3Moe();
        assertThat(bench.parameterCount()).isGreaterThan(100_000_000L);
        assertThat(bench.moe().experts()).isGreaterThanOrEqualTo(32);
        assertThat(bench.dim() % 256).isZero();
        assertThat(bench.moe().expertFfn() % 256).isZero();
    }

    @Test
    void inconsistentSpecsAreRejected() {
        Spec llama = SyntheticModels.tinyLlama();
        assertThatThrownBy(() -> new Spec("x", "qwen3moe", GgmlType.F32, 1, 2, 256, 4, 2, 64, 512, null, null,
                1e6f, null, 1024, 1e-6f, false)).hasMessageContaining("qwen3moe needs experts");
        assertThatThrownBy(() -> llama.withMla(SyntheticModels.tinyDeepseek2().mla()))
                .hasMessageContaining("takes no MLA");
        assertThatThrownBy(() -> new Moe(8, 2, 256, 0, 0, SyntheticModels.Gating.SIGMOID, true, 1f, 3, 1, false))
                .hasMessageContaining("expert groups");
        assertThatThrownBy(() -> SyntheticModels.preset("nope")).hasMessageContaining("tinyQwen3Moe");
        Spec deepseek32 = SyntheticModels.tinyDeepseek32();
        assertThatThrownBy(() -> deepseek32.withMla(deepseek32.mla().withIndexer(null)))
                .hasMessageContaining("deepseek32 needs an indexer");
        assertThatThrownBy(() -> SyntheticModels.tinyDeepseek2().withMla(deepseek32.mla()))
                .hasMessageContaining("deepseek2 takes no indexer");
        assertThatThrownBy(() -> new SyntheticModels.Indexer(8, 96, 12)).hasMessageContaining("indexer heads");
        assertThatThrownBy(() -> new Spec("x", "qwen3", GgmlType.F32, 1, 2, 256, 4, 2, 64, 512, null, null,
                1e6f, null, 1024, 1e-6f, false, 0, 16)).hasMessageContaining("qwen3 takes no sliding window");
        assertThatThrownBy(() -> new Spec("x", "glm4moe", GgmlType.F32, 1, 2, 256, 4, 2, 64, 512,
                SyntheticModels.tinyGlm4Moe().moe(), null, 1e6f, null, 1024, 1e-6f, false, 96, 0))
                .hasMessageContaining("rope dimensions 96");
        assertThatThrownBy(() -> new Spec("x", "glm4moe", GgmlType.F32, 1, 2, 256, 4, 2, 64, 512,
                new Moe(8, 2, 256, 1, 1, SyntheticModels.Gating.SIGMOID, true, 2.5f, 4, 2, true), null, 1e6f, null, 1024,
                1e-6f, false)).hasMessageContaining("glm4moe has no group-limited routing");
        assertThatThrownBy(() -> new Spec("x", "mamba", GgmlType.F32, 1, 2, 256, 4, 2, 64, 512, null, null,
                1e6f, null, 1024, 1e-6f, false)).hasMessageContaining("unsupported architecture");
    }

    @Test
    void routingSkewScalesOnlyTheRouterRowsWithAHotFewPerLayer() {
        Spec flat = SyntheticModels.tinyQwen3Moe();
        Spec skewed = new Spec(flat.name(), flat.arch(), flat.weightType(), flat.seed(), flat.layers(), flat.dim(),
                flat.heads(), flat.kvHeads(), flat.headDim(), flat.ffn(), flat.moe().withRoutingSkew(1f), null,
                flat.ropeTheta(), null, flat.contextLength(), flat.rmsEps(), false);
        try (GgufFile a = GgufFile.open(SyntheticModels.write(flat, dir.resolve("flat.gguf")));
             GgufFile b = GgufFile.open(SyntheticModels.write(skewed, dir.resolve("skewed.gguf")))) {
            assertThat(floats(b, "blk.0.ffn_up_exps.weight")).containsExactly(floats(a, "blk.0.ffn_up_exps.weight"));
            int dim = flat.dim(), experts = flat.moe().experts();
            float[][] ratios = new float[2][experts];
            for (int layer = 0; layer < 2; layer++) {
                float[] r0 = floats(a, "blk." + layer + ".ffn_gate_inp.weight");
                float[] r1 = floats(b, "blk." + layer + ".ffn_gate_inp.weight");
                for (int e = 0; e < experts; e++) {
                    ratios[layer][e] = r1[e * dim] / r0[e * dim];
                    for (int d = 0; d < dim; d++) { // a whole row scaled by one factor
                        assertThat(r1[e * dim + d]).isCloseTo(r0[e * dim + d] * ratios[layer][e],
                                org.assertj.core.data.Offset.offset(1e-5f));
                    }
                }
                float max = Float.NEGATIVE_INFINITY, min = Float.POSITIVE_INFINITY, sum = 0;
                for (float r : ratios[layer]) {
                    max = Math.max(max, r);
                    min = Math.min(min, r);
                    sum += r;
                }
                assertThat(max / min).as("rank 1 against rank %d at skew 1", experts).isCloseTo(experts, org.assertj.core.data.Offset.offset(1e-3f));
                assertThat(sum / experts).isCloseTo(1f, org.assertj.core.data.Offset.offset(1e-5f));
            }
            assertThat(ratios[0]).as("each layer has its own hot experts").isNotEqualTo(ratios[1]);
        }
        assertThat(SyntheticModels.preset("benchQwen3MoeSkewed").moe().routingSkew()).isPositive();
    }

    private static float[] floats(GgufFile f, String name) {
        GgufTensorInfo t = f.tensor(name);
        assertThat(t.type()).isEqualTo(GgmlType.F32);
        return f.data(t).toArray(ValueLayout.JAVA_FLOAT_UNALIGNED);
    }
}
