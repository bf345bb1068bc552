package dev.lazarus.gateway.ktnative;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.synthetic.SyntheticModels;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Two kt-native backends of one gateway, on the same BF16 model file, with different kernel choices: {@code ggml-variant}
 * zen4 (the BF16 dot product of {@code vdpbf16ps}) and icelake (ggml's AVX-512 BF16 order without it), both on the Java
 * kernels, which compute either order on any host. The two orders round some logits apart, so the two backends'
 * greedy answers (text and logprobs) differ; each backend's answers while both serve at the same time are those of a
 * backend with its choice that served alone. A kernel choice that were global to the JVM (the last backend loaded
 * deciding for both) or that leaked between requests would fail one of the two.
 *
 * <p>Each backend answers each prompt once (a prompt asked again would come from its prompt cache, another path):
 * the answers alone come from a second pair of backends with the same settings, asked one request at a time.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "lazarus.policy.store-path=")
@AutoConfigureWebTestClient(timeout = "PT2M")
class TwoKernelChoicesGatewayTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Map<String, String> VARIANTS = Map.of("zen4", "zen4", "icelake", "icelake");
    private static final List<String> PROMPTS = List.of(
            "The quick brown fox jumps over the lazy dog. Meanwhile, the gateway",
            "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
            "Grüße aus Köln — naïve café, Ελληνικά, русский текст");
    private static Path dir;

    @Autowired
    WebTestClient client;

    /** Backends {@code zen4}, {@code icelake} (served together) and {@code zen4-alone}, {@code icelake-alone}, one route each. */
    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) throws IOException {
        dir = Files.createTempDirectory("two-kernel-choices");
        Path model = SyntheticModels.write(SyntheticModels.tinyQwen3Moe().withWeightType(GgmlType.BF16),
                dir.resolve("tiny-qwen3moe-bf16.gguf"));
        int index = 0;
        for (String id : List.of("zen4", "icelake", "zen4-alone", "icelake-alone")) {
            String prefix = "lazarus.backends[" + index + "].";
            registry.add(prefix + "id", () -> id);
            registry.add(prefix + "kind", () -> "kt-native");
            registry.add(prefix + "settings.model", model::toString);
            registry.add(prefix + "settings.model-name", () -> id);
            registry.add(prefix + "settings.threads", () -> "1");
            registry.add(prefix + "settings.context-size", () -> "256");
            registry.add(prefix + "settings.gpu", () -> "off");
            registry.add(prefix + "settings.kernels", () -> "java");
            registry.add(prefix + "settings.ggml-variant", () -> VARIANTS.get(id.replace("-alone", "")));
            registry.add("lazarus.models[" + index + "].name", () -> id);
            registry.add("lazarus.models[" + index + "].backends[0]", () -> id);
            index++;
        }
        // first tokens of a model on one thread of a shared machine
        registry.add("lazarus.resilience.attempt.first-token-timeout", () -> "2m");
        registry.add("lazarus.resilience.breaker.slow-time-to-first-token", () -> "10m");
    }

    @AfterAll
    static void removeModel() throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    @Test
    void eachBackendKeepsItsOwnKernelChoiceWhileBothServe() {
        Map<String, JsonNode> alone = new LinkedHashMap<>();
        for (String prompt : PROMPTS) {
            for (String variant : List.of("zen4", "icelake")) {
                alone.put(variant + prompt, answer(variant + "-alone", prompt));
            }
        }
        int differing = 0;
        for (String prompt : PROMPTS) {
            // one request on each backend at once, their tokens computed side by side
            List<JsonNode> together = Mono.zip(
                    Mono.fromCallable(() -> answer("zen4", prompt)).subscribeOn(Schedulers.boundedElastic()),
                    Mono.fromCallable(() -> answer("icelake", prompt)).subscribeOn(Schedulers.boundedElastic()),
                    List::<JsonNode>of).block(Duration.ofMinutes(3));
            assertThat(together.get(0)).as("zen4 beside icelake, %s", prompt).isEqualTo(alone.get("zen4" + prompt));
            assertThat(together.get(1)).as("icelake beside zen4, %s", prompt).isEqualTo(alone.get("icelake" + prompt));
            if (!together.get(0).equals(together.get(1))) {
                differing++;
            }
        }
        assertThat(differing).as("prompts whose answers the two BF16 orders round apart").isPositive();
    }

    /** The greedy 24-token chat answer of {@code model}, its message and the logprobs of every token. */
    private JsonNode answer(String model, String prompt) {
        Map<String, Object> body = Map.of("model", model, "messages", List.of(Map.of("role", "user", "content", prompt)),
                "max_tokens", 24, "temperature", 0, "logprobs", true, "top_logprobs", 3);
        String response = client.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                .exchange().expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
        return JSON.readTree(response).at("/choices/0");
    }
}
