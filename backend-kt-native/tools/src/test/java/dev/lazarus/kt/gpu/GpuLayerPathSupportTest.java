package dev.lazarus.kt.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.model.ModelConfig;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.placement.ExpertPlacement;
import dev.lazarus.kt.placement.PlacementConfig;
import dev.lazarus.kt.synthetic.SyntheticModels;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which models the GPU layer path takes, and that without a CUDA tier nothing changes. Runs without a GPU. */
class GpuLayerPathSupportTest {

    @TempDir
    Path dir;

    private String unsupported(SyntheticModels.Spec spec) {
        try (GgufFile file = GgufFile.open(SyntheticModels.write(spec, dir.resolve(spec.name() + ".gguf")))) {
            return DeviceWeights.unsupported(Model.describe(file), ModelConfig.fromMetadata(file.metadata()));
        }
    }

    @Test
    void takesQ8_0AndKQuantModelsOfEveryArchitectureAndSaysWhyNotOtherwise() {
        assertThat(unsupported(SyntheticModels.tinyQwen3Moe().withWeightType(GgmlType.Q8_0))).isNull();
        assertThat(unsupported(SyntheticModels.tinyDeepseek2().withWeightType(GgmlType.Q8_0))).isNull();
        assertThat(unsupported(SyntheticModels.tinyQwen3().withWeightType(GgmlType.Q8_0))).isNull();
        assertThat(unsupported(SyntheticModels.tinyLlama().withWeightType(GgmlType.Q8_0))).isNull();
        assertThat(unsupported(SyntheticModels.tinyQwen3Moe())).isNull(); // F32
        assertThat(unsupported(SyntheticModels.tinyLlama().withWeightType(GgmlType.F16))).isNull();
        for (GgmlType type : new GgmlType[] {GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K, GgmlType.Q4_0}) {
            assertThat(unsupported(SyntheticModels.tinyQwen3Moe().withWeightType(type))).as("%s", type).isNull();
        }
        assertThat(unsupported(SyntheticModels.tinyQwen3Moe().withWeightType(GgmlType.Q5_0))).contains("Q5_0");
        assertThat(unsupported(SyntheticModels.tinyDeepseek2())).contains("attn_q_a").contains("F32").contains("Q8_0");
        SyntheticModels.Spec fused = SyntheticModels.tinyDeepseek2().withWeightType(GgmlType.Q8_0);
        fused = fused.withMla(fused.mla().withSplitKvB(false)).withName("fused-kv-b");
        assertThat(unsupported(fused)).isNull();
        SyntheticModels.Spec odd = SyntheticModels.tinyDeepseek2().withWeightType(GgmlType.Q8_0);
        odd = odd.withMla(new SyntheticModels.Mla(128, 128, 48, 32, 64, true)).withName("odd-mla");
        assertThat(unsupported(odd)).contains("MLA sizes");
    }

    @Test
    void refusesGlm4MoeAndGptOssWhoseBlocksHaveNoDeviceKernels() {
        // Q8_0 throughout, which the path takes for every other architecture: biases, post-attention norms, sinks,
        // windows and swiglu_oai are what it lacks
        assertThat(unsupported(SyntheticModels.tinyGlm4Moe().withWeightType(GgmlType.Q8_0)))
                .isEqualTo("glm4moe blocks have no GPU layer path yet");
        assertThat(unsupported(SyntheticModels.tinyGptOss().withWeightType(GgmlType.Q8_0)))
                .isEqualTo("gpt-oss blocks have no GPU layer path yet");
    }

    @Test
    void refusesQwen35MoeAndQwen3NextWhoseDeltaNetBlocksHaveNoDeviceKernels() {
        assertThat(unsupported(SyntheticModels.tinyQwen35Moe().withWeightType(GgmlType.Q8_0)))
                .isEqualTo("qwen35moe blocks have no GPU layer path yet");
        assertThat(unsupported(SyntheticModels.tinyQwen3Next().withWeightType(GgmlType.Q8_0)))
                .isEqualTo("qwen3next blocks have no GPU layer path yet");
    }

    @Test
    void refusesMinimaxM2WhoseQkNormAcrossHeadsHasNoDeviceKernel() {
        assertThat(unsupported(SyntheticModels.tinyMinimaxM2().withWeightType(GgmlType.Q8_0)))
                .isEqualTo("minimax-m2 blocks have no GPU layer path yet");
    }

    @Test
    void refusesDeepseek32AndGlmDsaWhoseIndexerHasNoDeviceKernels() {
        // deepseek2's Q8_0 latent attention runs there; the lightning indexer does not (its experts may still go to the
        // GPU tier, attention and the rest stay on the CPU)
        assertThat(unsupported(SyntheticModels.tinyDeepseek32().withWeightType(GgmlType.Q8_0)))
                .isEqualTo("deepseek32's lightning indexer (sparse attention) has no GPU kernels");
        assertThat(unsupported(SyntheticModels.tinyGlmDsa().withWeightType(GgmlType.Q8_0)))
                .isEqualTo("glm-dsa's lightning indexer (sparse attention) has no GPU kernels");
    }

    @Test
    void withoutACudaTierTheLayersStayOnTheCpu() {
        try (GgufFile file = GgufFile.open(GpuParityCheck.tinyModel(dir)); Parallel parallel = Parallel.ofThreads(1)) {
            Model model = Model.load(file, parallel);
            PlacementConfig config = PlacementConfig.cpuOnly().withGpuLayers(true);
            try (ExpertPlacement placement = ExpertPlacement.install(model, "tiny", config, null)) {
                assertThat(GpuTiers.installLayers(model, file, placement, null, 1)).isEmpty();
                assertThat(GpuTiers.installLayers(model, file, null, null, 1)).isEmpty();
            }
        }
    }
}
