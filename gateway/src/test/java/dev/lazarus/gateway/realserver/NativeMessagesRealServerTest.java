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
import tools.jackson.databind.node.ObjectNode;

/**
 * The Messages API passed through to a real llama-server's own {@code /v1/messages} ({@code messages: native}): the
 * answer, streamed or not, is llama-server's own but for the gateway's {@code id} (and the usage's split between
 * cached and new prompt tokens, which depends on the server's cache); a native backend that dies before answering
 * hands the request to a translating one; {@code messages: off} leaves a backend out of the route, and a model with
 * no backend left answers 400 naming the model and the path; a native stream cut mid-answer goes on, translated,
 * on the next backend as one message.
 */
@Tag("llama-server")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class NativeMessagesRealServerTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String REQUEST = """
            {"model": "%s", "max_tokens": 8, "temperature": 0, "system": "You are terse.",
             "messages": [{"role": "user", "content": "Name a river."}]}
            """;

    static LlamaServerProcess server;
    /** Killed by the failover test: a native backend that was up at start and is dead when called. */
    static LlamaServerProcess victim;
    static CuttingProxy cutter;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        server = RealLlamaServers.start();
        victim = RealLlamaServers.start();
        cutter = new CuttingProxy(server.url());
        cutter.cutAfter.set(4); // message_start, content_block_start, two deltas
        RealLlamaServers.backend(registry, 0, "native", server.url().toString());
        registry.add("lazarus.backends[0].settings.messages", () -> "native");
        RealLlamaServers.backend(registry, 1, "xlate", server.url().toString());
        registry.add("lazarus.backends[1].settings.messages", () -> "translate");
        RealLlamaServers.backend(registry, 2, "off", server.url().toString());
        registry.add("lazarus.backends[2].settings.messages", () -> "off");
        RealLlamaServers.backend(registry, 3, "victim", victim.url().toString());
        registry.add("lazarus.backends[3].settings.messages", () -> "native");
        RealLlamaServers.backend(registry, 4, "cut", cutter.url().toString());
        registry.add("lazarus.backends[4].settings.messages", () -> "native");
        RealLlamaServers.route(registry, 0, "tiny-native", "native");
        RealLlamaServers.route(registry, 1, "tiny-failover", "victim", "xlate");
        RealLlamaServers.route(registry, 2, "tiny-off", "off", "native");
        RealLlamaServers.route(registry, 3, "tiny-none", "off");
        RealLlamaServers.route(registry, 4, "tiny-cut", "cut", "xlate");
        // The victim stays UP for the gateway until the call finds it dead: no health check in between.
        registry.add("lazarus.health.interval", () -> "10m");
    }

    @AfterAll
    static void stop() {
        cutter.close();
        RealLlamaServers.stopAll();
    }

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void aNativeAnswerIsLlamaServersOwnButForItsId() throws Exception {
        HttpResponse<String> through = post(port(), "tiny-native", false);
        assertThat(through.headers().firstValue("X-Lazarus-Backend")).contains("native");
        JsonNode ours = JSON.readTree(through.body());
        JsonNode theirs = JSON.readTree(post(server.url().toString(), "tiny-native", false).body());
        assertThat(ours.get("id").asString()).startsWith("msg_").isNotEqualTo(theirs.get("id").asString());
        assertThat(ours.get("model").asString()).isNotBlank();
        assertThat(comparable(ours)).isEqualTo(comparable(theirs));

        List<JsonNode> ourEvents = events(post(port(), "tiny-native", true).body());
        List<JsonNode> theirEvents = events(post(server.url().toString(), "tiny-native", true).body());
        assertThat(ourEvents.getFirst().at("/data/message/id").asString()).startsWith("msg_")
                .isNotEqualTo(theirEvents.getFirst().at("/data/message/id").asString());
        assertThat(ourEvents.getFirst().at("/data/message/model").asString()).isEqualTo(ours.get("model").asString());
        assertThat(ourEvents.stream().map(NativeMessagesRealServerTest::comparable).toList())
                .isEqualTo(theirEvents.stream().map(NativeMessagesRealServerTest::comparable).toList());
        assertThat(ourEvents.getLast().get("event").asString()).isEqualTo("message_stop");

        awaitMetric("lazarus_backend_calls_total\\{[^}]*backend=\"native\",endpoint=\"messages\"[^}]*outcome=\"success\"");
        awaitMetric("lazarus_completion_tokens_total\\{[^}]*backend=\"native\",endpoint=\"messages\"[^}]*} [1-9]");
        awaitMetric("lazarus_prompt_tokens_total\\{[^}]*backend=\"native\",endpoint=\"messages\"[^}]*} [1-9]");
    }

    @Test
    void aDeadNativeBackendHandsTheRequestToATranslatingOneBeforeTheFirstByte() throws Exception {
        victim.close();
        for (boolean stream : List.of(false, true)) {
            HttpResponse<String> through = post(port(), "tiny-failover", stream);
            assertThat(through.headers().firstValue("X-Lazarus-Backend")).contains("xlate");
            String direct = post(server.url().toString(), "tiny-failover", stream).body();
            if (stream) {
                assertThat(text(events(through.body()))).isEqualTo(text(events(direct)));
                assertThat(events(through.body()).getLast().get("event").asString()).isEqualTo("message_stop");
            } else {
                assertThat(JSON.readTree(through.body()).get("content"))
                        .isEqualTo(JSON.readTree(direct).get("content"));
            }
        }
        awaitMetric("lazarus_backend_calls_total\\{[^}]*backend=\"victim\",endpoint=\"messages\"[^}]*outcome=\"unavailable\"");
    }

    @Test
    void aBackendWithMessagesOffIsLeftOutAndAModelWithNoneLeftIsA400() throws Exception {
        HttpResponse<String> through = post(port(), "tiny-off", false);
        assertThat(through.headers().firstValue("X-Lazarus-Backend")).contains("native");

        HttpResponse<String> none = send(port() + "/v1/messages", REQUEST.formatted("tiny-none"));
        assertThat(none.statusCode()).isEqualTo(400);
        JsonNode error = JSON.readTree(none.body());
        assertThat(error.get("type").asString()).isEqualTo("error");
        assertThat(error.at("/error/type").asString()).isEqualTo("invalid_request_error");
        assertThat(error.at("/error/message").asString()).contains("'tiny-none'").contains("/v1/messages");

        JsonNode models = JSON.readTree(http.send(HttpRequest.newBuilder(URI.create(port() + "/v1/models")).GET()
                .build(), HttpResponse.BodyHandlers.ofString()).body());
        for (JsonNode model : models.get("data")) {
            List<String> endpoints = new ArrayList<>();
            model.get("endpoints").forEach(e -> endpoints.add(e.asString()));
            if (model.get("id").asString().equals("tiny-none")) {
                assertThat(endpoints).contains("/v1/chat/completions").doesNotContain("/v1/messages");
            } else {
                assertThat(endpoints).contains("/v1/messages");
            }
        }
    }

    /**
     * Cut after its second text delta, the native stream goes on as chat on the next backend (the same server,
     * translated): the client sees one message, the cut one's blocks extended, and the text greedy decoding gives.
     */
    @Test
    void aNativeStreamCutMidAnswerGoesOnAsOneMessage() throws Exception {
        int cutsBefore = cutter.cuts.get();
        HttpResponse<String> through = post(port(), "tiny-cut", true);
        assertThat(through.headers().firstValue("X-Lazarus-Backend")).contains("cut");
        List<JsonNode> events = events(through.body());
        List<String> names = events.stream().map(e -> e.get("event").asString()).toList();
        assertThat(cutter.cuts.get()).isGreaterThan(cutsBefore);
        assertThat(names).as(through.body()).doesNotContain("error")
                .startsWith("message_start", "content_block_start", "content_block_delta", "content_block_delta")
                .endsWith("content_block_stop", "message_delta", "message_stop");
        assertThat(names.stream().filter("message_start"::equals)).hasSize(1);
        assertThat(names.stream().filter("content_block_start"::equals)).as("one text block").hasSize(1);
        assertThat(events.stream().filter(e -> e.get("event").asString().startsWith("content_block_"))
                .map(e -> e.at("/data/index").asInt()).distinct()).containsExactly(0);
        JsonNode delta = events.get(names.size() - 2);
        assertThat(delta.at("/data/delta/stop_reason").asString()).isIn("end_turn", "max_tokens");
        assertThat(delta.at("/data/usage/output_tokens").asInt()).as("the whole answer's").isBetween(3, 8);

        StringBuilder text = new StringBuilder();
        events.stream().filter(e -> e.at("/data/delta/type").asString("").equals("text_delta"))
                .forEach(e -> text.append(e.at("/data/delta/text").asString()));
        StringBuilder whole = new StringBuilder();
        events(post(port(), "tiny-native", true).body()).stream()
                .filter(e -> e.at("/data/delta/type").asString("").equals("text_delta"))
                .forEach(e -> whole.append(e.at("/data/delta/text").asString()));
        String cutPart = events.get(2).at("/data/delta/text").asString() + events.get(3).at("/data/delta/text").asString();
        assertThat(text.length()).as("went on after the cut").isGreaterThan(cutPart.length());
        assertThat(whole.toString()).as("greedy decoding, cut or not").startsWith(cutPart);
    }

    private String port() {
        return "http://127.0.0.1:" + port;
    }

    /** An answer or event without what differs between two servings: the id, and the prompt's cached share. */
    private static JsonNode comparable(JsonNode node) {
        ObjectNode copy = (ObjectNode) node.deepCopy();
        ObjectNode message = copy.has("data") && copy.get("data").has("message")
                ? (ObjectNode) copy.get("data").get("message") : copy.has("data") ? null : copy;
        if (message != null) {
            message.remove("id");
            message.remove("model");
            if (message.get("usage") instanceof ObjectNode usage) {
                usage.put("input_tokens", usage.path("input_tokens").asInt()
                        + usage.path("cache_read_input_tokens").asInt());
                usage.remove("cache_read_input_tokens");
            }
        }
        return copy;
    }

    private static String text(List<JsonNode> events) {
        StringBuilder text = new StringBuilder();
        events.forEach(e -> text.append(e.at("/data/delta/text").asString("")));
        return text.toString();
    }

    /**
     * The stream's events as {@code {"event": name, "data": {...}}}, pings included: llama-server sends none, the
     * gateway's translation does (as Anthropic's API does), so a translated answer never passes for a native one.
     */
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
            body = body.replace("\"max_tokens\": 8,", "\"max_tokens\": 8, \"stream\": true,");
        }
        HttpResponse<String> response = send(base + "/v1/messages", body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return response;
    }

    private HttpResponse<String> send(String url, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(url))
                .header("content-type", "application/json").header("anthropic-version", "2023-06-01")
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
        return http.send(HttpRequest.newBuilder(URI.create(port() + "/actuator/prometheus"))
                .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofString()).body();
    }
}
