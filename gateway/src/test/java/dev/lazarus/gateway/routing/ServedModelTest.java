package dev.lazarus.gateway.routing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.gateway.testing.ScriptedBackendFactory;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The model an answer names: never one the backend lists that was not asked for (issue 28, item 6). */
class ServedModelTest {

    private static RouteTarget target(List<String> models, String backendModel) {
        return new RouteTarget(new ScriptedBackendFactory().create(
                new BackendConfig("served-" + models.size(), "scripted", Map.of("models", models))), backendModel);
    }

    @Test
    void aServerOfSeveralModelsServesTheOneItWasAskedFor() {
        // The public name equals one of the upstream's: it is that one, not the first it lists.
        assertThat(AttemptLoop.servedModel("qwen-b", target(List.of("qwen-a", "qwen-b", "qwen-c"), "qwen-b")))
                .isEqualTo("qwen-b");
    }

    @Test
    void aServerOfSeveralModelsThatListsNoneOfThatNameIsReportedByTheNameItWasSent() {
        assertThat(AttemptLoop.servedModel("other", target(List.of("qwen-a", "qwen-b"), "other"))).isEqualTo("other");
    }

    @Test
    void aServerOfOneModelServesItWhateverItWasAskedFor() {
        assertThat(AttemptLoop.servedModel("tiny", target(List.of("tiny-llama.gguf"), "tiny")))
                .isEqualTo("tiny-llama.gguf");
    }

    @Test
    void aConfiguredBackendModelIsWhatWasServed() {
        assertThat(AttemptLoop.servedModel("public", target(List.of("qwen-a", "qwen-b"), "qwen-a")))
                .isEqualTo("qwen-a");
    }
}
