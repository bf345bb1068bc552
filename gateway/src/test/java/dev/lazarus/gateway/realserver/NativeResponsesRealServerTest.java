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
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The Responses API passed through to a real llama-server's own {@code /v1/responses} ({@code responses: native}):
 * the answer, streamed or not, is llama-server's own but for the gateway's response id and model (and what differs
 * between any two servings: item ids, times, the prompt's cached share), and it is stored under the gateway's id; a
 * native backend that dies before answering hands the request to a translating one; {@code responses: off} leaves
 * a backend out, and a model with no backend left answers 400 naming the model and the path; a continuation of a
 * stored response, which only the gateway holds, is served translated.
 */
@Tag("llama-server")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class NativeResponsesRealServerTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String REQUEST = """
            {"model": "%s", "max_output_tokens": 8, "temperature": 0, "instructions": "You are terse.",
             "input": "Name a river."}
            """;
    /** What differs between two servings of one request. */
    private static final Set<String> VARYING = Set.of("id", "item_id", "created_at", "completed_at", "timings",
            "input_tokens_details", "model");

    static LlamaServerProcess server;
    /** Killed by the failover test: a native backend that was up at start and is dead when called. */
    static LlamaServerProcess victim;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        server = RealLlamaServers.start();
        victim = RealLlamaServers.start();
        RealLlamaServers.backend(registry, 0, "native", server.url().toString());
        registry.add("lazarus.backends[0].settings.responses", () -> "native");
        RealLlamaServers.backend(registry, 1, "xlate", server.url().toString());
        registry.add("lazarus.backends[1].settings.responses", () -> "translate");
        RealLlamaServers.backend(registry, 2, "off", server.url().toString());
        registry.add("lazarus.backends[2].settings.responses", () -> "off");
        RealLlamaServers.backend(registry, 3, "victim", victim.url().toString());
        registry.add("lazarus.backends[3].settings.responses", () -> "native");
        RealLlamaServers.route(registry, 0, "tiny-native", "native");
        RealLlamaServers.route(registry, 1, "tiny-failover", "victim", "xlate");
        RealLlamaServers.route(registry, 2, "tiny-off", "off", "native");
        RealLlamaServers.route(registry, 3, "tiny-none", "off");
        // The victim stays UP for the gateway until the call finds it dead: no health check in between.
        registry.add("lazarus.health.interval", () -> "10m");
    }

    @AfterAll
    static void stop() {
        RealLlamaServers.stopAll();
    }

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void aNativeAnswerIsLlamaServersOwnButForItsIdAndIsStored() throws Exception {
        HttpResponse<String> through = post(gateway(), "tiny-native", false);
        assertThat(through.headers().firstValue("X-Lazarus-Backend")).contains("native");
        JsonNode ours = JSON.readTree(through.body());
        JsonNode theirs = JSON.readTree(post(server.url().toString(), "tiny-native", false).body());
        assertThat(ours.get("id").asString()).startsWith("resp_").isNotEqualTo(theirs.get("id").asString());
        assertThat(ours.get("model").asString()).as("the model that answered").isNotBlank();
        assertThat(comparable(ours)).isEqualTo(comparable(theirs));
        assertThat(ours.at("/usage/input_tokens")).isEqualTo(theirs.at("/usage/input_tokens"));
        JsonNode kept = JSON.readTree(http.send(HttpRequest.newBuilder(URI.create(gateway() + "/v1/responses/"
                + ours.get("id").asString())).GET().build(), HttpResponse.BodyHandlers.ofString()).body());
        assertThat(kept.get("id")).isEqualTo(ours.get("id"));
        assertThat(kept.get("output")).isEqualTo(ours.get("output"));

        List<JsonNode> ourEvents = events(post(gateway(), "tiny-native", true).body());
        List<JsonNode> theirEvents = events(post(server.url().toString(), "tiny-native", true).body());
        assertThat(ourEvents.getFirst().at("/data/response/id").asString()).startsWith("resp_")
                .isNotEqualTo(theirEvents.getFirst().at("/data/response/id").asString());
        assertThat(ourEvents.getLast().get("event").asString()).isEqualTo("response.completed");
        assertThat(ourEvents.getLast().at("/data/response/id")).isEqualTo(ourEvents.getFirst().at("/data/response/id"));
        assertThat(ourEvents.stream().map(NativeResponsesRealServerTest::comparable).toList())
                .isEqualTo(theirEvents.stream().map(NativeResponsesRealServerTest::comparable).toList());

        awaitMetric("lazarus_backend_calls_total\\{[^}]*backend=\"native\",endpoint=\"responses\"[^}]*outcome=\"success\"");
        awaitMetric("lazarus_completion_tokens_total\\{[^}]*backend=\"native\",endpoint=\"responses\"[^}]*} [1-9]");
        awaitMetric("lazarus_prompt_tokens_total\\{[^}]*backend=\"native\",endpoint=\"responses\"[^}]*} [1-9]");

        // Only the gateway holds the stored conversation: its continuation is translated, on the same backend.
        String next = "{\"model\": \"tiny-native\", \"max_output_tokens\": 4, \"previous_response_id\": \""
                + ours.get("id").asString() + "\", \"input\": \"And another.\"}";
        HttpResponse<String> continued = send(gateway() + "/v1/responses", next);
        assertThat(continued.statusCode()).as(continued.body()).isEqualTo(200);
        assertThat(JSON.readTree(continued.body()).at("/usage/input_tokens").asInt())
                .as("the stored turn reached the prompt").isGreaterThan(ours.at("/usage/input_tokens").asInt());
    }

    @Test
    void aDeadNativeBackendHandsTheRequestToATranslatingOneBeforeTheFirstByte() throws Exception {
        victim.close();
        for (boolean stream : List.of(false, true)) {
            HttpResponse<String> through = post(gateway(), "tiny-failover", stream);
            assertThat(through.headers().firstValue("X-Lazarus-Backend")).contains("xlate");
            String direct = post(server.url().toString(), "tiny-failover", stream).body();
            if (stream) {
                assertThat(events(through.body()).getLast().at("/data/response/output/0/content/0/text"))
                        .isEqualTo(events(direct).getLast().at("/data/response/output/0/content/0/text"));
            } else {
                assertThat(JSON.readTree(through.body()).at("/output/0/content/0/text"))
                        .isEqualTo(JSON.readTree(direct).at("/output/0/content/0/text"));
            }
        }
        awaitMetric("lazarus_backend_calls_total\\{[^}]*backend=\"victim\",endpoint=\"responses\"[^}]*outcome=\"unavailable\"");
    }

    @Test
    void aBackendWithResponsesOffIsLeftOutAndAModelWithNoneLeftIsA400() throws Exception {
        assertThat(post(gateway(), "tiny-off", false).headers().firstValue("X-Lazarus-Backend")).contains("native");

        HttpResponse<String> none = send(gateway() + "/v1/responses", REQUEST.formatted("tiny-none"));
        assertThat(none.statusCode()).isEqualTo(400);
        JsonNode error = JSON.readTree(none.body()).get("error");
        assertThat(error.get("type").asString()).isEqualTo("invalid_request_error");
        assertThat(error.get("message").asString()).contains("'tiny-none'").contains("/v1/responses");
    }

    private String gateway() {
        return "http://127.0.0.1:" + port;
    }

    /** The node without what differs between two servings, at any depth. */
    private static JsonNode comparable(JsonNode node) {
        JsonNode copy = node.deepCopy();
        strip(copy);
        return copy;
    }

    private static void strip(JsonNode node) {
        if (node instanceof ObjectNode object) {
            object.remove(VARYING);
        }
        node.forEach(NativeResponsesRealServerTest::strip);
    }

    /** The stream's events as {@code {"event": name, "data": {...}}}. */
    private static List<JsonNode> events(String stream) {
        List<JsonNode> events = new ArrayList<>();
        String name = null;
        for (String line : stream.split("\n")) {
            if (line.startsWith("event: ")) {
                name = line.substring("event: ".length());
            } else if (line.startsWith("data: ")) {
                ObjectNode event = JSON.createObjectNode().put("event", name);
                event.set("data", JSON.readTree(line.substring("data: ".length())));
                events.add(event);
            }
        }
        assertThat(events).as(stream).isNotEmpty();
        return events;
    }

    private HttpResponse<String> post(String base, String model, boolean stream) throws Exception {
        String body = REQUEST.formatted(model);
        if (stream) {
            body = body.replace("\"max_output_tokens\": 8,", "\"max_output_tokens\": 8, \"stream\": true,");
        }
        HttpResponse<String> response = send(base + "/v1/responses", body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return response;
    }

    private HttpResponse<String> send(String url, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(url)).header("content-type", "application/json")
                .timeout(Duration.ofMinutes(2)).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** A call's meters are recorded just after its answer went: the metric shows within a few seconds. */
    private void awaitMetric(String pattern) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        String metrics = prometheus();
        while (!java.util.regex.Pattern.compile(pattern).matcher(metrics).find() && System.nanoTime() < deadline) {
            Thread.sleep(100);
            metrics = prometheus();
        }
        assertThat(metrics).containsPattern(pattern);
    }

    private String prometheus() throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(gateway() + "/actuator/prometheus"))
                .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofString()).body();
    }
}
