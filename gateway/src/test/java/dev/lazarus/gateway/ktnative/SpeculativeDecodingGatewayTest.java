package dev.lazarus.gateway.ktnative;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.synthetic.SyntheticModels;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * kt-native backends configured for speculative decoding ({@code spec-type}) answer as the same model without it: greedy
 * and seeded sampled completions, a stop string and {@code max_tokens} falling inside a run of accepted draft tokens.
 * Each backend reports its drafts in {@code /v1/models} meta and Prometheus; the n-gram drafts on a repetitive prompt
 * and the model drafting for itself are accepted, another model's drafts are partly rejected, so the equal answers
 * cover both outcomes of the verification.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "lazarus.policy.store-path=")
@AutoConfigureWebTestClient(timeout = "PT2M")
class SpeculativeDecodingGatewayTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String REPETITIVE = "alpha beta gamma delta, alpha beta gamma delta, alpha beta gamma delta, "
            + "alpha beta gamma delta, alpha beta gamma delta, alpha beta";
    private static Path dir;

    @Autowired
    WebTestClient client;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) throws IOException {
        dir = Files.createTempDirectory("speculative-decoding");
        Path model = SyntheticModels.write(SyntheticModels.tinyQwen3Moe(), dir.resolve("tiny-qwen3moe.gguf"));
        Path other = SyntheticModels.write(SyntheticModels.tinyQwen3Moe().withSeed(99), dir.resolve("other.gguf"));
        Map<String, Map<String, String>> backends = new LinkedHashMap<>();
        backends.put("plain", Map.of());
        backends.put("ngram", Map.of("spec-type", "ngram-simple", "spec-ngram-simple-size-n", "3",
                "spec-ngram-simple-size-m", "16"));
        backends.put("self-draft", Map.of("spec-type", "draft-simple", "spec-draft-model", model.toString(),
                "spec-draft-n-max", "4"));
        backends.put("other-draft", Map.of("spec-type", "draft-simple", "spec-draft-model", other.toString()));
        int index = 0;
        for (Map.Entry<String, Map<String, String>> backend : backends.entrySet()) {
            String id = backend.getKey();
            String prefix = "lazarus.backends[" + index + "].";
            registry.add(prefix + "id", () -> id);
            registry.add(prefix + "kind", () -> "kt-native");
            registry.add(prefix + "settings.model", model::toString);
            registry.add(prefix + "settings.model-name", () -> id);
            registry.add(prefix + "settings.threads", () -> "1");
            registry.add(prefix + "settings.context-size", () -> "512");
            registry.add(prefix + "settings.gpu", () -> "off");
            backend.getValue().forEach((key, value) -> registry.add(prefix + "settings." + key, () -> value));
            registry.add("lazarus.models[" + index + "].name", () -> id);
            registry.add("lazarus.models[" + index + "].backends[0]", () -> id);
            index++;
        }
        registry.add("lazarus.resilience.attempt.first-token-timeout", () -> "2m");
        registry.add("lazarus.resilience.breaker.slow-time-to-first-token", () -> "10m");
    }

    @AfterAll
    static void removeModels() throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    @Test
    void speculativeBackendsAnswerAsThePlainOneAndReportTheirDrafts() {
        Map<String, Object> greedy = Map.of("prompt", REPETITIVE, "max_tokens", 80, "temperature", 0);
        JsonNode plain = complete("plain", greedy);
        for (String backend : List.of("ngram", "self-draft", "other-draft")) {
            assertThat(complete(backend, greedy)).as(backend).isEqualTo(plain);
        }

        // a stop string and max_tokens inside the answer: the n-gram drafts run past both (asked again, both backends
        // take the prompt from their prompt caches)
        String text = plain.at("/text").asString();
        String stop = text.substring(text.length() / 2, text.length() / 2 + 4);
        Map<String, Object> stopped = Map.of("prompt", REPETITIVE, "max_tokens", 80, "temperature", 0,
                "stop", List.of(stop));
        JsonNode plainStopped = complete("plain", stopped);
        assertThat(plainStopped.at("/finish_reason").asString()).isEqualTo("stop");
        assertThat(plainStopped.at("/text").asString()).isEqualTo(text.substring(0, text.indexOf(stop)));
        assertThat(complete("ngram", stopped)).isEqualTo(plainStopped);
        Map<String, Object> shortAnswer = Map.of("prompt", REPETITIVE + " gamma", "max_tokens", 13, "temperature", 0);
        JsonNode plainShort = complete("plain", shortAnswer);
        assertThat(plainShort.at("/finish_reason").asString()).isEqualTo("length");
        assertThat(complete("ngram", shortAnswer)).isEqualTo(plainShort);

        // a grammar: the sampler moves it along each emitted token, drafted or not
        Map<String, Object> constrained = Map.of("prompt", REPETITIVE + ",", "max_tokens", 40, "temperature", 0,
                "grammar", "root ::= word (\" \" word)*\nword ::= \"alpha\" | \"beta\" | \"gamma\" | \"delta\"");
        JsonNode plainConstrained = complete("plain", constrained);
        // the words of the grammar, the last one perhaps cut by max_tokens
        assertThat(plainConstrained.at("/text").asString()).matches("((alpha|beta|gamma|delta) )+[a-z]*");
        assertThat(complete("ngram", constrained)).isEqualTo(plainConstrained);

        // sampled with a seed: the same random draws for the same tokens
        Map<String, Object> sampled = Map.of("prompt", REPETITIVE + " delta", "max_tokens", 60, "temperature", 0.7,
                "seed", 1234);
        JsonNode plainSampled = complete("plain", sampled);
        assertThat(complete("ngram", sampled)).isEqualTo(plainSampled);
        assertThat(complete("other-draft", sampled)).isEqualTo(plainSampled);

        JsonNode ngram = speculativeMeta("ngram");
        assertThat(ngram.at("/type").asString()).isEqualTo("ngram-simple");
        assertThat(ngram.at("/accepted_tokens").asLong()).as("n-gram tokens accepted").isPositive();
        assertThat(ngram.at("/tokens_per_step").asDouble()).isGreaterThan(1.0);
        JsonNode self = speculativeMeta("self-draft");
        assertThat(self.at("/drafted_tokens").asLong()).isPositive();
        // not exactly 1: after a step the draft model catches up on two tokens in one pass, which rounds apart from
        // two single-token passes, and a near tie can go the other way
        assertThat(self.at("/acceptance_rate").asDouble()).isGreaterThan(0.9);
        JsonNode otherDraft = speculativeMeta("other-draft");
        assertThat(otherDraft.at("/drafted_tokens").asLong()).isPositive();
        assertThat(otherDraft.at("/acceptance_rate").asDouble()).isLessThan(1.0);
        assertThat(models().get("plain").has("speculative")).isFalse();

        String metrics = client.get().uri("/actuator/prometheus").exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
        assertThat(metrics)
                .containsPattern("lazarus_speculative_acceptance_ratio\\{backend=\"self-draft\"} (1\\.0|0\\.9)")
                .containsPattern("lazarus_speculative_accepted_tokens_total\\{backend=\"ngram\"} [1-9]")
                .containsPattern("lazarus_speculative_draft_tokens_total\\{backend=\"other-draft\"} [1-9]")
                .containsPattern("lazarus_speculative_tokens_per_step\\{backend=\"ngram\"} 1\\.[0-9]*[1-9]")
                .doesNotContainPattern("lazarus_speculative_[a-z_]+\\{backend=\"plain\"}");
    }

    /** The completion's choice: its text and finish reason. */
    private JsonNode complete(String model, Map<String, Object> request) {
        Map<String, Object> body = new LinkedHashMap<>(request);
        body.put("model", model);
        String response = client.post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                .exchange().expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
        JsonNode choice = JSON.readTree(response).at("/choices/0");
        return JSON.createObjectNode().put("text", choice.at("/text").asString())
                .put("finish_reason", choice.at("/finish_reason").asString());
    }

    private JsonNode speculativeMeta(String model) {
        return models().get(model).at("/speculative");
    }

    /** Each model's meta, by id. */
    private Map<String, JsonNode> models() {
        String response = client.get().uri("/v1/models").exchange().expectStatus().isOk().expectBody(String.class)
                .returnResult().getResponseBody();
        Map<String, JsonNode> meta = new LinkedHashMap<>();
        for (JsonNode m : JSON.readTree(response).at("/data")) {
            meta.put(m.at("/id").asString(), m.at("/meta"));
        }
        return meta;
    }
}
