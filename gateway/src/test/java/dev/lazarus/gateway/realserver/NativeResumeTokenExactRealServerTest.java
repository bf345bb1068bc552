package dev.lazarus.gateway.realserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.testsupport.LlamaServerProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A Messages or Responses stream passed through natively from a llama-server ({@code auto}) and cut mid-answer goes on
 * on a second llama-server of the same GGUF token-exact: the client's text equals the uncut greedy answer of the
 * server's own endpoint, wherever the cut falls. The first server's answers pass a {@link CuttingProxy} that ends the
 * connection after a chosen event, so the cut lands on the same token on any machine. The tiny generated model's
 * greedy answers are runs of odd vocabulary pieces that a tokenizer given their text merges differently, and hold
 * characters cut in their bytes that the native streams write as U+FFFD: a continuation from the text so far drifts
 * from the uncut answer; the replay of the greedy answer on the second server does not. A sampled Responses stream is
 * replayed from its seed, the client's or the one the gateway gave it.
 */
@Tag("llama-server")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class NativeResumeTokenExactRealServerTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final int MAX_TOKENS = 48;
    private static final String PROMPT = "Tell me a long story about the sea.";

    static LlamaServerProcess first;
    static LlamaServerProcess second;
    static CuttingProxy cutter;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        first = RealLlamaServers.start();
        second = RealLlamaServers.start();
        cutter = new CuttingProxy(first.url());
        RealLlamaServers.backend(registry, 0, "cut", cutter.url().toString());
        RealLlamaServers.backend(registry, 1, "second", second.url().toString());
        RealLlamaServers.route(registry, 0, "tiny", "cut", "second");
        registry.add("lazarus.health.interval", () -> "10m");
    }

    @AfterAll
    static void stop() {
        cutter.close();
        RealLlamaServers.stopAll();
    }

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newHttpClient();

    /** Cut after {@code events} server-sent events: message_start, content_block_start, then one a token. */
    @ParameterizedTest
    @ValueSource(ints = {4, 9, 17, 26})
    void aCutMessagesStreamGoesOnAsTheUncutGreedyAnswer(int events) throws Exception {
        String request = """
                {"model": "tiny", "max_tokens": %d, "temperature": 0, "stream": %s,
                 "messages": [{"role": "user", "content": "%s"}]}""";
        JsonNode uncut = JSON.readTree(send(second.url() + "/v1/messages", request.formatted(MAX_TOKENS, false, PROMPT)));
        String expected = uncut.at("/content/0/text").asString();
        assertThat(expected.length()).as("an answer long enough to cut").isGreaterThan(20);

        String body = cutAt(events, "/v1/messages", request.formatted(MAX_TOKENS, true, PROMPT));
        StringBuilder text = new StringBuilder();
        int starts = 0;
        for (JsonNode event : data(body)) {
            String type = event.get("type").asString();
            assertThat(type).as(body).isNotEqualTo("error");
            starts += type.equals("message_start") ? 1 : 0;
            if (type.equals("content_block_delta")) {
                text.append(event.at("/delta/text").asString());
            }
            if (type.equals("message_delta")) {
                assertThat(event.at("/usage/output_tokens").asInt()).as("the whole answer's")
                        .isEqualTo(uncut.at("/usage/output_tokens").asInt());
            }
        }
        assertThat(starts).isEqualTo(1);
        assertThat(text.toString()).as("cut after %d events", events).isEqualTo(expected);
    }

    /** Cut after {@code events}: created, in_progress, output_item.added, content_part.added, then one a token. */
    @ParameterizedTest
    @ValueSource(ints = {6, 11, 19})
    void aCutResponsesStreamGoesOnAsTheUncutGreedyAnswer(int events) throws Exception {
        String request = """
                {"model": "tiny", "max_output_tokens": %d, "temperature": 0, "stream": %s, "store": false,
                 "input": "%s"}""";
        JsonNode uncut = JSON.readTree(send(second.url() + "/v1/responses", request.formatted(MAX_TOKENS, false, PROMPT)));
        StringBuilder expected = new StringBuilder();
        uncut.get("output").forEach(item -> item.path("content").forEach(part -> expected.append(part.path("text").asString(""))));
        assertThat(expected.length()).as("an answer long enough to cut").isGreaterThan(20);

        String body = cutAt(events, "/v1/responses", request.formatted(MAX_TOKENS, true, PROMPT));
        StringBuilder deltas = new StringBuilder();
        for (JsonNode event : data(body)) {
            String type = event.get("type").asString();
            assertThat(type).as(body).isNotIn("error", "response.failed");
            if (type.equals("response.output_text.delta")) {
                deltas.append(event.get("delta").asString());
            }
        }
        assertThat(deltas.toString()).as("cut after %d events", events).isEqualTo(expected.toString());
    }

    /**
     * A sampled Responses stream with the client's seed: the answer that seed gives is made again on the second server
     * (llama-server's Responses endpoint takes {@code seed}, as its chat endpoint does) and goes on from the cut.
     */
    @ParameterizedTest
    @ValueSource(ints = {8, 17})
    void aCutSampledResponsesStreamWithASeedGoesOnAsTheUncutAnswerOfThatSeed(int events) throws Exception {
        String request = """
                {"model": "tiny", "max_output_tokens": %d, "temperature": 0.9, "seed": 4242, "stream": %s, "store": false,
                 "input": "%s"}""";
        String expected = responseText(JSON.readTree(send(second.url() + "/v1/responses",
                request.formatted(MAX_TOKENS, false, PROMPT))));
        assertThat(expected.length()).as("an answer long enough to cut").isGreaterThan(20);

        String body = cutAt(events, "/v1/responses", request.formatted(MAX_TOKENS, true, PROMPT));
        assertThat(deltas(body)).as("cut after %d events", events).isEqualTo(expected);
    }

    /**
     * A sampled Responses stream without a seed is given one by the gateway (the same in the native request and its
     * replay): cut, it goes on as the uncut answer of the seed the first server was sent.
     */
    @Test
    void aCutSampledResponsesStreamWithoutASeedGoesOnAsTheUncutAnswerOfTheSeedItWasGiven() throws Exception {
        String request = """
                {"model": "tiny", "max_output_tokens": %d, "temperature": 0.9, "stream": %s, "store": false,
                 "input": "%s"}""";
        int sentBefore = cutter.sent.size();
        String body = cutAt(13, "/v1/responses", request.formatted(MAX_TOKENS, true, PROMPT));
        java.util.List<String> sent = cutter.sent.subList(sentBefore, cutter.sent.size());
        java.util.regex.Matcher seed = java.util.regex.Pattern.compile("\"seed\":(\\d+)").matcher(String.join("", sent));
        assertThat(seed.find()).as("the native request carried a seed: %s", sent).isTrue();

        String seeded = """
                {"model": "tiny", "max_output_tokens": %d, "temperature": 0.9, "seed": %s, "stream": false, "store": false,
                 "input": "%s"}""".formatted(MAX_TOKENS, seed.group(1), PROMPT);
        String expected = responseText(JSON.readTree(send(second.url() + "/v1/responses", seeded)));
        assertThat(deltas(body)).isEqualTo(expected);
    }

    private static String responseText(JsonNode response) {
        StringBuilder text = new StringBuilder();
        response.get("output").forEach(item -> item.path("content").forEach(part -> text.append(part.path("text").asString(""))));
        return text.toString();
    }

    private static String deltas(String stream) {
        StringBuilder deltas = new StringBuilder();
        for (JsonNode event : data(stream)) {
            String type = event.get("type").asString();
            assertThat(type).as(stream).isNotIn("error", "response.failed");
            if (type.equals("response.output_text.delta")) {
                deltas.append(event.get("delta").asString());
            }
        }
        return deltas.toString();
    }

    private String cutAt(int events, String path, String request) throws Exception {
        int cutsBefore = cutter.cuts.get();
        cutter.cutAfter.set(events);
        try {
            String body = send("http://127.0.0.1:" + port + path, request);
            assertThat(cutter.cuts.get()).as("the stream was cut").isGreaterThan(cutsBefore);
            return body;
        } finally {
            cutter.cutAfter.set(0);
        }
    }

    private String send(String url, String body) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(url))
                .header("content-type", "application/json").header("anthropic-version", "2023-06-01")
                .timeout(Duration.ofMinutes(2)).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return response.body();
    }

    /** The data of every event of a stream. */
    private static java.util.List<JsonNode> data(String stream) {
        java.util.List<JsonNode> events = new java.util.ArrayList<>();
        for (String line : stream.split("\n")) {
            if (line.startsWith("data: ") && !line.equals("data: [DONE]")) {
                events.add(JSON.readTree(line.substring("data: ".length())));
            }
        }
        assertThat(events).as(stream).isNotEmpty();
        return events;
    }
}
