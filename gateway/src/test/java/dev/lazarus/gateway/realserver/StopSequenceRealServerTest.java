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
 * A Messages answer that one of the request's {@code stop_sequences} ended says so, as Anthropic's does:
 * {@code stop_reason: "stop_sequence"} and the sequence in {@code stop_sequence}, whole and streamed (in
 * {@code message_delta}), from kt-native (translated: its finish chunk names the stop string) and from a real
 * llama-server's own Messages endpoint (which names the sequence but calls the stop {@code end_turn}). The stop
 * sequence is taken from the answer the same greedy request gives without it, so it is one the model does write.
 */
@Tag("llama-server")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class StopSequenceRealServerTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    static LlamaServerProcess server;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        server = RealLlamaServers.start();
        RealLlamaServers.backend(registry, 0, "llama", server.url().toString());
        registry.add("lazarus.backends[0].settings.messages", () -> "native");
        registry.add("lazarus.backends[1].id", () -> "kt");
        registry.add("lazarus.backends[1].kind", () -> "kt-native");
        registry.add("lazarus.backends[1].settings.model", () -> "classpath:models/lazarus-tiny-moe.gguf");
        registry.add("lazarus.backends[1].settings.warmup-tokens", () -> "0");
        RealLlamaServers.route(registry, 0, "tiny-llama", "llama");
        RealLlamaServers.route(registry, 1, "lazarus-tiny-moe", "kt");
        registry.add("lazarus.policy.store-path", () -> System.getProperty("java.io.tmpdir")
                + "/lazarus-stop-sequence-policy-" + ProcessHandle.current().pid());
    }

    @AfterAll
    static void stop() {
        RealLlamaServers.stopAll();
    }

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void kt_nativeTellsTheStopSequenceThatEndedTheAnswer() throws Exception {
        assertStopSequence("lazarus-tiny-moe");
    }

    @Test
    void llamaServersOwnMessagesTellTheStopSequenceAsAnthropicDoes() throws Exception {
        assertStopSequence("tiny-llama");
    }

    private void assertStopSequence(String model) throws Exception {
        awaitServed(model);
        JsonNode free = message(model, null, false);
        String text = free.at("/content/0/text").asString();
        String stop = stopIn(text);
        String before = text.substring(0, text.indexOf(stop));

        JsonNode stopped = message(model, stop, false);
        assertThat(stopped.get("stop_reason").asString()).as(stopped.toString()).isEqualTo("stop_sequence");
        assertThat(stopped.get("stop_sequence").asString()).isEqualTo(stop);
        assertThat(stopped.at("/content/0/text").asString("")).isEqualTo(before);

        List<JsonNode> events = stream(model, stop);
        JsonNode delta = events.stream().filter(e -> e.get("type").asString().equals("message_delta")).findFirst()
                .orElseThrow();
        assertThat(delta.at("/delta/stop_reason").asString()).as(delta.toString()).isEqualTo("stop_sequence");
        assertThat(delta.at("/delta/stop_sequence").asString()).isEqualTo(stop);
        StringBuilder streamed = new StringBuilder();
        events.stream().filter(e -> e.at("/delta/type").asString("").equals("text_delta"))
                .forEach(e -> streamed.append(e.at("/delta/text").asString()));
        assertThat(streamed.toString()).isEqualTo(before);

        // a stop sequence the answer never reaches changes nothing
        JsonNode unmet = message(model, "\u0007never\u0007", false);
        assertThat(unmet.get("stop_reason").asString()).isIn("end_turn", "max_tokens");
        assertThat(unmet.get("stop_sequence").isNull()).isTrue();
        assertThat(unmet.at("/content/0/text").asString()).isEqualTo(text);
    }

    /** Until its backend is up (kt-native loads its model after the gateway started): answered 529 until then. */
    private void awaitServed(String model) throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
        while (true) {
            HttpResponse<String> response = post(body(model, null, false));
            if (response.statusCode() != 529 || System.nanoTime() > deadline) {
                assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
                return;
            }
            Thread.sleep(500);
        }
    }

    /** Two letters or digits the answer has after its first character: a stop sequence the model writes. */
    private static String stopIn(String text) {
        for (int i = 1; i + 2 <= text.length(); i++) {
            if (Character.isLetterOrDigit(text.charAt(i)) && Character.isLetterOrDigit(text.charAt(i + 1))) {
                return text.substring(i, i + 2);
            }
        }
        throw new AssertionError("no two letters after the first character of the answer '" + text + "'");
    }

    private JsonNode message(String model, String stop, boolean stream) throws Exception {
        return JSON.readTree(send(body(model, stop, stream)));
    }

    private List<JsonNode> stream(String model, String stop) throws Exception {
        List<JsonNode> events = new ArrayList<>();
        for (String line : send(body(model, stop, true)).split("\n")) {
            if (line.startsWith("data: ")) {
                events.add(JSON.readTree(line.substring("data: ".length())));
            }
        }
        return events;
    }

    private static String body(String model, String stop, boolean stream) {
        var body = JSON.createObjectNode().put("model", model).put("max_tokens", 12).put("temperature", 0)
                .put("stream", stream);
        body.putArray("messages").addObject().put("role", "user").put("content", "Name a river.");
        if (stop != null) {
            body.putArray("stop_sequences").add("\u0007unused\u0007").add(stop);
        }
        return body.toString();
    }

    private String send(String body) throws Exception {
        HttpResponse<String> response = post(body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return response.body();
    }

    private HttpResponse<String> post(String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/messages"))
                .header("content-type", "application/json").header("anthropic-version", "2023-06-01")
                .timeout(Duration.ofMinutes(3)).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
