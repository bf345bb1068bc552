package dev.lazarus.kt.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What the configuration reads for glm4moe, glm-dsa, gpt-oss and minimax-m2, as llama.cpp reads it. */
class ModelConfigTest {

    private static Map<String, Object> metadata(String arch, Object... keyValues) {
        Map<String, Object> md = new HashMap<>();
        md.put("general.architecture", arch);
        md.put(arch + ".embedding_length", 64);
        md.put(arch + ".attention.head_count", 4);
        md.put(arch + ".block_count", 4);
        md.put(arch + ".expert_count", 8);
        md.put(arch + ".expert_used_count", 2);
        for (int i = 0; i < keyValues.length; i += 2) {
            md.put(arch + "." + keyValues[i], keyValues[i + 1]);
        }
        return md;
    }

    @Test
    void gptOssSlidesItsEvenBlocksAndSoftmaxesTheChosenLogits() {
        ModelConfig c = ModelConfig.fromMetadata(metadata("gpt-oss", "attention.sliding_window", 128,
                "expert_gating_func", 1));
        assertThat(c.slidingWindow()).isEqualTo(128);
        assertThat(c.isSlidingWindowBlock(0)).isTrue();
        assertThat(c.isSlidingWindowBlock(1)).isFalse();
        assertThat(c.isSlidingWindowBlock(2)).isTrue();
        // llama.cpp's graph fixes gpt-oss's gating whatever the key says
        assertThat(c.moe().gating()).isEqualTo(MoeConfig.Gating.SOFTMAX_WEIGHT);
        assertThat(c.moe().normalizeWeights()).isFalse();
        assertThat(c.rope().style()).isEqualTo(RopeStyle.NEOX);
    }

    @Test
    void glm4moeLeavesOutItsNextnBlocksAndDefaultsToSigmoid() {
        ModelConfig c = ModelConfig.fromMetadata(metadata("glm4moe", "nextn_predict_layers", 1,
                "attention.sliding_window", 128, "rope.dimension_count", 8, "expert_weights_norm", true));
        assertThat(c.blockCount()).isEqualTo(3);
        assertThat(c.moe().gating()).isEqualTo(MoeConfig.Gating.SIGMOID);
        assertThat(c.moe().normalizeWeights()).isTrue();
        // no sliding window pattern in glm4moe: the key, if present, is not llama.cpp's business here either
        assertThat(c.isSlidingWindowBlock(0)).isFalse();
        assertThat(c.rope().dimensions()).isEqualTo(8);
    }

    @Test
    void glmDsaSharesIndexersAsItsTypesOrGlm52sContextSay() {
        Object[] mla = {"attention.kv_lora_rank", 32, "attention.q_lora_rank", 32, "attention.key_length", 48,
                "attention.value_length", 32, "attention.key_length_mla", 24, "attention.value_length_mla", 16,
                "rope.dimension_count", 8, "attention.indexer.head_count", 4, "attention.indexer.key_length", 64,
                "attention.indexer.top_k", 16, "nextn_predict_layers", 1, "context_length", 202_752};
        // GLM-5 / 5.1: every block its own indexer
        ModelConfig c = ModelConfig.fromMetadata(metadata("glm-dsa", mla));
        assertThat(c.architecture().sparseAttention()).isTrue();
        assertThat(c.architecture().indexerRopeStyle()).isEqualTo(RopeStyle.NORMAL);
        assertThat(c.architecture().indexerNormEps()).isZero();
        assertThat(c.mla().indexer().topK()).isEqualTo(16);
        assertThat(c.mla().indexer().shares()).isFalse();
        assertThat(c.blockCount()).isEqualTo(3);
        assertThat(c.moe().gating()).isEqualTo(MoeConfig.Gating.SIGMOID);
        Map<String, Object> typed = metadata("glm-dsa", mla);
        typed.put("glm-dsa.attention.indexer.types", List.of("full", "shared", "full"));
        MlaConfig.Indexer indexer = ModelConfig.fromMetadata(typed).mla().indexer();
        assertThat(indexer.runsOwn(0)).isTrue();
        assertThat(indexer.runsOwn(1)).isFalse();
        assertThat(indexer.runsOwn(2)).isTrue();
        typed.put("glm-dsa.attention.indexer.types", List.of(0, 1, 1));
        assertThatThrownBy(() -> ModelConfig.fromMetadata(typed)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("first block shares");
        // GLM-5.2 without the key: its million-token context selects the default pattern
        Map<String, Object> glm52 = metadata("glm-dsa", mla);
        glm52.put("glm-dsa.context_length", 1 << 20);
        glm52.put("glm-dsa.block_count", 11);
        MlaConfig.Indexer pattern = ModelConfig.fromMetadata(glm52).mla().indexer();
        assertThat(java.util.stream.IntStream.range(0, 10).filter(pattern::runsOwn).boxed().toList())
                .containsExactly(0, 1, 2, 6);
    }

    @Test
    void minimaxM2AlwaysRenormalisesAndNeverScalesItsExpertWeights() {
        // llama.cpp's minimax-m2 graph passes norm_w = true and reads neither key, whatever a file carries
        ModelConfig c = ModelConfig.fromMetadata(metadata("minimax-m2", "expert_weights_norm", false,
                "expert_weights_scale", 2.5f, "rope.dimension_count", 8));
        assertThat(c.moe().gating()).isEqualTo(MoeConfig.Gating.SIGMOID);
        assertThat(c.moe().normalizeWeights()).isTrue();
        assertThat(c.moe().weightsScale()).isZero();
        assertThat(c.rope().style()).isEqualTo(RopeStyle.NEOX);
        assertThat(c.rope().dimensions()).isEqualTo(8);
    }

    @Test
    void anExplicitGatingFunctionWinsOverTheDefault() {
        ModelConfig c = ModelConfig.fromMetadata(metadata("glm4moe", "expert_gating_func", 1));
        assertThat(c.moe().gating()).isEqualTo(MoeConfig.Gating.SOFTMAX);
        assertThat(ModelConfig.fromMetadata(metadata("deepseek2")).moe().gating()).isEqualTo(MoeConfig.Gating.SOFTMAX);
    }
}
