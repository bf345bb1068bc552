package dev.lazarus.kt.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.backend.api.ModelInfo;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufWriter;
import org.assertj.core.api.InstanceOfAssertFactories;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The backend's preflight: a GGUF that needs a tensor type or an architecture the engine lacks is refused from its
 * header, by name, before any weight is read: health DOWN with that reason, the model's metadata saying what it needs
 * and what is unsupported (the gateway's preflight and admin view read it), requests answered 503 with it.
 */
class KtNativePreflightTest {

    @TempDir
    Path dir;

    /** A header-only model: {@code arch}, one F32 embedding, and 24 layers of routed down-projections in {@code experts}. */
    private Path model(String arch, GgmlType experts) {
        GgufWriter w = new GgufWriter().putString("general.architecture", arch).putString("general.name", "preflight");
        w.addTensor("token_embd.weight", new float[256 * 4], new long[] {256, 4}, GgmlType.F32);
        for (int layer = 0; layer < 24; layer++) {
            long[] shape = {256, 2, 4};
            w.addTensor("blk." + layer + ".ffn_down_exps.weight", experts, shape,
                    new byte[(int) experts.bytesFor(256 * 2 * 4)]);
        }
        Path path = dir.resolve(arch + "-" + experts + ".gguf");
        w.write(path);
        return path;
    }

    private static KtNativeBackend backend(Path model) {
        return (KtNativeBackend) new KtNativeBackendFactory().create(new BackendConfig("kt", "kt-native",
                Map.of("model", model.toString(), "threads", 1, "model-name", "m")));
    }

    @Test
    void aTensorTypeTheEngineLacksIsNamedWithItsTensorsAndTheBackendIsDown() {
        try (KtNativeBackend backend = backend(model("qwen3moe", GgmlType.TQ1_0))) {
            String expected = "unsupported tensor types: TQ1_0 (blk.*.ffn_down_exps.weight, 24 tensors)";
            ModelInfo info = backend.describe().models().getFirst();
            assertThat(info.unsupported()).contains(expected);
            @SuppressWarnings("unchecked")
            Map<String, Object> needs = (Map<String, Object>) info.metadata().get(ModelInfo.NEEDS);
            assertThat(needs).containsEntry("architecture", "qwen3moe")
                    .containsEntry("tensor_types", Map.of("F32", 1, "TQ1_0", 24))
                    .containsEntry("unsupported", List.of(expected));

            BackendHealth health = awaitNotLoading(backend);
            assertThat(health.status()).isEqualTo(BackendHealth.Status.DOWN);
            assertThat(health.detail()).isEqualTo(expected);
            assertThatThrownBy(() -> backend.chat(ChatCompletionRequest.builder().model("m")
                    .messages(List.of(ChatMessage.user("hi"))).build()).blockLast(Duration.ofSeconds(10)))
                    .isInstanceOf(BackendException.class).hasMessageContaining(expected);
        }
    }

    @Test
    void anArchitectureTheEngineLacksIsNamed() {
        try (KtNativeBackend backend = backend(model("mamba", GgmlType.F16))) {
            assertThat(backend.describe().models().getFirst().unsupported()).hasValueSatisfying(reason -> assertThat(reason)
                    .startsWith("unsupported architecture: mamba (supported: ").contains("qwen3moe", "deepseek2")
                    .doesNotContain("tensor types"));
            assertThat(awaitNotLoading(backend).detail()).startsWith("unsupported architecture: mamba");
        }
    }

    @Test
    void qwen35moeQwen3nextMinimaxM2AndGlmDsaAreAcceptedAndMambaIsNamed() {
        assertThat(ModelNeeds.of(model("qwen35moe", GgmlType.Q8_0)).refusal()).isEmpty();
        assertThat(ModelNeeds.of(model("qwen3next", GgmlType.Q8_0)).refusal()).isEmpty();
        assertThat(ModelNeeds.of(model("minimax-m2", GgmlType.Q8_0)).refusal()).isEmpty();
        assertThat(ModelNeeds.of(model("glm-dsa", GgmlType.Q8_0)).refusal()).isEmpty();
        assertThat(ModelNeeds.of(model("mamba", GgmlType.Q8_0)).refusal()).get(InstanceOfAssertFactories.STRING)
                .startsWith("unsupported architecture: mamba (supported: ").contains("qwen35moe", "qwen3next",
                        "minimax-m2", "glm-dsa");
    }

    @Test
    void aModelTheEngineComputesReportsItsNeedsAndNothingUnsupported() {
        ModelNeeds needs = ModelNeeds.of(model("qwen3moe", GgmlType.Q2_K));
        assertThat(needs.refusal()).isEmpty();
        assertThat(needs.tensorTypes()).containsEntry("Q2_K", 24);
        // DeepSeek-V3.2 as the operators run it (Q3_K_M: Q3_K experts)
        assertThat(ModelNeeds.of(model("deepseek32", GgmlType.Q3_K)).refusal()).isEmpty();
        // GLM-5.x as its users run it (Q2_K experts)
        assertThat(ModelNeeds.of(model("glm-dsa", GgmlType.Q2_K)).refusal()).isEmpty();
        for (GgmlType iquant : List.of(GgmlType.IQ1_S, GgmlType.IQ1_M, GgmlType.IQ2_XXS, GgmlType.IQ2_XS,
                GgmlType.IQ2_S, GgmlType.IQ3_XXS, GgmlType.IQ3_S)) {
            assertThat(ModelNeeds.of(model("qwen3moe", iquant)).refusal()).as("%s", iquant).isEmpty();
        }
    }

    private static BackendHealth awaitNotLoading(KtNativeBackend backend) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        BackendHealth h = backend.health().block(Duration.ofSeconds(5));
        while (h.status() == BackendHealth.Status.LOADING && System.nanoTime() < deadline) {
            Thread.onSpinWait();
            h = backend.health().block(Duration.ofSeconds(5));
        }
        return h;
    }
}
