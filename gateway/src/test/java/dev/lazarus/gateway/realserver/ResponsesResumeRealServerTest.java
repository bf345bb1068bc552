package dev.lazarus.gateway.realserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.testsupport.LlamaServerProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A Responses stream whose llama-server (passing its own Responses stream through, {@code responses} left at
 * {@code auto}) is SIGKILLed after its first text delta goes on on the second llama-server of the same GGUF as one
 * response: one {@code response.created}, numbers without a gap, no {@code response.failed}, and the final output
 * holding every delta the client got ({@link TranslatedResponsesResumeRealServerTest}: translated).
 */
@Tag("llama-server")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ResponsesResumeRealServerTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final int MAX_TOKENS = 200;

    static LlamaServerProcess victim;
    static LlamaServerProcess survivor;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        // One thread: the answer lasts long enough for the kill to find it on any machine.
        victim = RealLlamaServers.startParallel(1, MAX_TOKENS + 128, "--threads", "1");
        survivor = RealLlamaServers.startParallel(1, MAX_TOKENS + 128);
        RealLlamaServers.backend(registry, 0, "victim", victim.url().toString());
        RealLlamaServers.backend(registry, 1, "survivor", survivor.url().toString());
        RealLlamaServers.route(registry, 0, "tiny", "victim", "survivor");
        registry.add("lazarus.resilience.breaker.slow-time-to-first-token", () -> "1m");
        registry.add("lazarus.resilience.breaker.min-throughput", () -> "0.1");
    }

    @AfterAll
    static void stop() {
        RealLlamaServers.stopAll();
    }

    @LocalServerPort
    int port;

    /** Whether the killed backend passes its server's own Responses stream through (llama-server's default). */
    boolean passedThrough() {
        return true;
    }

    @Test
    void aKilledBackendsStreamGoesOnAsOneResponse() throws Exception {
        String body = """
                {"model": "tiny", "input": "Tell me a long story about the sea.", "temperature": 0,
                 "max_output_tokens": %d, "stream": true, "store": false}""".formatted(MAX_TOKENS);
        List<JsonNode> events = new ArrayList<>();
        boolean[] killed = {false};
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<java.util.stream.Stream<String>> response = http.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/responses"))
                            .timeout(Duration.ofMinutes(3)).header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                    HttpResponse.BodyHandlers.ofLines());
            assertThat(response.statusCode()).isEqualTo(200);
            response.body().filter(line -> line.startsWith("data: ")).forEach(line -> {
                JsonNode event = JSON.readTree(line.substring("data: ".length()));
                events.add(event);
                if (!killed[0] && event.get("type").asString().equals("response.output_text.delta")) {
                    victim.kill();
                    killed[0] = true;
                }
            });
        }
        assertThat(killed[0]).isTrue();
        assertThat(victim.isAlive()).isFalse();
        List<String> types = events.stream().map(e -> e.get("type").asString()).toList();
        assertThat(types).containsOnlyOnce("response.created", "response.output_item.added")
                .doesNotContain("response.failed", "error");
        assertThat(types.getLast()).isIn("response.completed", "response.incomplete");
        for (int i = 0; i < events.size(); i++) {
            JsonNode number = events.get(i).get("sequence_number");
            if (number == null && passedThrough()) {
                continue; // llama-server's own events carry none; the gateway's after the resume go on from their count
            }
            assertThat(number).as("event %d", i).isNotNull();
            assertThat(number.asInt()).isEqualTo(i);
        }
        StringBuilder deltas = new StringBuilder();
        events.stream().filter(e -> e.get("type").asString().equals("response.output_text.delta"))
                .forEach(e -> deltas.append(e.get("delta").asString()));
        JsonNode response = events.getLast().get("response");
        assertThat(response.at("/output/0/content/0/text").asString()).isEqualTo(deltas.toString());
        assertThat(types.stream().filter("response.output_text.delta"::equals).count())
                .as("the answer went on after the kill").isGreaterThan(10);
        assertThat(response.at("/usage/output_tokens").asInt()).isBetween(11, MAX_TOKENS);
    }
}
