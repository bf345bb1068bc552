package dev.lazarus.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.testing.GatewayTestSupport;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

class CompletionsAndModelsTest extends GatewayTestSupport {

    @Test
    void legacyCompletionIsAggregated() {
        JsonNode answer = json(post("/v1/completions",
                "{\"model\": \"test-model\", \"prompt\": \"Once\", \"max_tokens\": 5, \"min_p\": 0.1}")
                .expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody());
        assertThat(answer.get("id").asString()).startsWith("cmpl-");
        assertThat(answer.get("object").asString()).isEqualTo("text_completion");
        assertThat(answer.get("model").asString()).isEqualTo("scripted");
        assertThat(answer.at("/choices/0/text").asString()).isEqualTo("Hello, world");
        assertThat(answer.at("/choices/0/finish_reason").asString()).isEqualTo("stop");
        assertThat(answer.at("/usage/completion_tokens").asInt()).isEqualTo(3);
        assertThat(backend("alpha").lastCompletion().extra()).containsEntry("min_p", 0.1);
    }

    @Test
    void legacyCompletionStreams() {
        String body = post("/v1/completions",
                "{\"model\": \"test-model\", \"prompt\": [\"Once\"], \"stream\": true,"
                        + " \"stream_options\": {\"include_usage\": true}}")
                .expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
        List<String> events = events(body);
        assertThat(events.getLast()).isEqualTo("[DONE]");
        List<JsonNode> chunks = events.subList(0, events.size() - 1).stream().map(GatewayTestSupport::json).toList();
        assertThat(chunks).allSatisfy(c -> assertThat(c.get("id").asString()).isEqualTo(chunks.getFirst().get("id")
                .asString()).startsWith("cmpl-"));
        assertThat(chunks.getLast().get("choices")).isEmpty();
        assertThat(chunks.getLast().at("/usage/completion_tokens").asInt()).isEqualTo(3);
    }

    @Test
    @SuppressWarnings("unchecked")
    void modelsListsThePublicNames() {
        client.get().uri("/v1/models").header("Authorization", "Bearer " + API_KEY).exchange()
                .expectStatus().isOk()
                .expectBody()
                .jsonPath("$.object").isEqualTo("list")
                .jsonPath("$.data[*].id").value(ids -> assertThat((List<Object>) ids)
                        .containsExactly("test-model", "mapped-model", "chat-only-model", "org/slashed-model",
                                "resume-model"))
                .jsonPath("$.data[0].object").isEqualTo("model")
                .jsonPath("$.data[1].owned_by").isEqualTo("tests")
                .jsonPath("$.data[0].owned_by").isEqualTo("lazarus");
    }

    @Test
    void modelsCarryWhatTheServingBackendsSayAboutThem() {
        client.get().uri("/v1/models").header("Authorization", "Bearer " + API_KEY).exchange()
                .expectStatus().isOk()
                .expectBody()
                // test-model: alpha's facts (the primary), random weights from its fallback beta
                .jsonPath("$.data[0].meta.architecture").isEqualTo("qwen3moe")
                .jsonPath("$.data[0].meta.quantization").isEqualTo("F16")
                .jsonPath("$.data[0].meta.context_length").isEqualTo(4096)
                .jsonPath("$.data[0].meta.random_weights").isEqualTo(true)
                // the OpenAI fields stay exactly as they were
                .jsonPath("$.data[0].id").isEqualTo("test-model")
                .jsonPath("$.data[0].object").isEqualTo("model")
                .jsonPath("$.data[0].created").isNumber()
                .jsonPath("$.data[0].owned_by").isEqualTo("lazarus")
                // mapped-model: its backend reports nothing, so there is no meta at all
                .jsonPath("$.data[1].meta").doesNotExist()
                .jsonPath("$.data[3].meta.random_weights").isEqualTo(true)
                .jsonPath("$.data[3].meta.architecture").doesNotExist();
        client.get().uri("/v1/models/org/slashed-model").header("Authorization", "Bearer " + API_KEY).exchange()
                .expectStatus().isOk().expectBody().jsonPath("$.meta.random_weights").isEqualTo(true);
    }

    @Test
    void modelsNeverShowServerLocations() {
        String body = client.get().uri("/v1/models").header("Authorization", "Bearer " + API_KEY).exchange()
                .expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
        assertThat(json(body).at("/data/0/meta/architecture").asString()).as("alpha's facts are shown").isEqualTo("qwen3moe");
        assertThat(body).doesNotContain("model_path", "cache_dir", "/srv/models");
    }

    @Test
    void oneModelByIdIncludingSlashes() {
        client.get().uri("/v1/models/test-model").header("Authorization", "Bearer " + API_KEY).exchange()
                .expectStatus().isOk().expectBody().jsonPath("$.id").isEqualTo("test-model");
        client.get().uri("/v1/models/org/slashed-model").header("Authorization", "Bearer " + API_KEY).exchange()
                .expectStatus().isOk().expectBody().jsonPath("$.id").isEqualTo("org/slashed-model");
        client.get().uri("/v1/models/nope").header("Authorization", "Bearer " + API_KEY).exchange()
                .expectStatus().isNotFound()
                .expectBody().jsonPath("$.error.code").isEqualTo("model_not_found");
    }
}
