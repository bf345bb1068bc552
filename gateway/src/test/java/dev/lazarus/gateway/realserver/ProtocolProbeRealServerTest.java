package dev.lazarus.gateway.realserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.ChatProtocol;
import dev.lazarus.backend.api.ProtocolMode;
import dev.lazarus.gateway.resilience.BackendBreakers;
import dev.lazarus.gateway.resilience.BackendStatsRegistry;
import dev.lazarus.gateway.routing.BackendRegistry;
import dev.lazarus.kt.testsupport.LlamaServerProcess;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code messages} and {@code responses} left at {@code auto}: a real llama-server, which has both endpoints, is
 * passed through to; a server without them (a {@link ChatOnlyServer} in front of a llama-server, answering 404 there)
 * is found out by the health check's probe and translated for; and one whose server loses them after the probe (the
 * same kind of server, refusing only from then on) learns it from the 404 of a live request, which goes on translated
 * on the same backend at once, not on the next one, without a failure on the backend's breaker or figures.
 */
@Tag("llama-server")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ProtocolProbeRealServerTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    static LlamaServerProcess server;
    static ChatOnlyServer older;
    static ChatOnlyServer swapped;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        server = RealLlamaServers.start();
        older = new ChatOnlyServer(server.url());
        swapped = new ChatOnlyServer(server.url());
        swapped.refusing.set(false); // until the test swaps in a server without the endpoints
        RealLlamaServers.backend(registry, 0, "llama", server.url().toString());
        RealLlamaServers.backend(registry, 1, "older", older.url().toString());
        RealLlamaServers.backend(registry, 2, "swapped", swapped.url().toString());
        registry.add("lazarus.backends[1].kind", () -> "openai");
        RealLlamaServers.route(registry, 0, "tiny", "llama");
        RealLlamaServers.route(registry, 1, "old", "older");
        RealLlamaServers.route(registry, 2, "swap", "swapped", "llama");
    }

    @AfterAll
    static void stop() {
        older.close();
        swapped.close();
        RealLlamaServers.stopAll();
    }

    @Autowired
    BackendRegistry backends;

    @Autowired
    BackendBreakers breakers;

    @Autowired
    BackendStatsRegistry stats;

    @LocalServerPort
    int port;

    @Test
    void llamaServerIsPassedThroughAndAServerWithoutTheEndpointsTranslatedFor() throws Exception {
        assertThat(mode("llama", ChatProtocol.MESSAGES)).as("auto starts native").isEqualTo(ProtocolMode.NATIVE);
        assertThat(modeOnceProbed("older", ChatProtocol.MESSAGES)).isEqualTo(ProtocolMode.TRANSLATE);
        assertThat(modeOnceProbed("older", ChatProtocol.RESPONSES)).isEqualTo(ProtocolMode.TRANSLATE);
        assertThat(older.refused("/v1/messages")).isPositive();
        assertThat(older.refused("/v1/responses")).isPositive();
        assertThat(mode("llama", ChatProtocol.MESSAGES)).isEqualTo(ProtocolMode.NATIVE);
        assertThat(mode("llama", ChatProtocol.RESPONSES)).isEqualTo(ProtocolMode.NATIVE);

        HttpResponse<String> native_ = messages("tiny", false);
        assertThat(JSON.readTree(native_.body()).get("type").asString()).isEqualTo("message");
        int probes = older.refused("/v1/messages");
        int chats = older.posts("/v1/chat/completions");
        HttpResponse<String> translated = messages("old", false);
        JsonNode answer = JSON.readTree(translated.body());
        assertThat(answer.get("type").asString()).isEqualTo("message");
        assertThat(answer.at("/content/0/text").asString()).isNotEmpty();
        assertThat(older.refused("/v1/messages")).as("no native try once translated").isEqualTo(probes);
        assertThat(older.posts("/v1/chat/completions")).isEqualTo(chats + 1);
    }

    @Test
    void aLiveNotFoundTeachesTranslationAndTheRequestGoesOnTranslatedOnTheSameBackend() throws Exception {
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while ((swapped.posts("/v1/messages") == 0 || swapped.posts("/v1/responses") == 0)
                && System.nanoTime() < until) {
            Thread.sleep(100);
        }
        assertThat(swapped.posts("/v1/messages")).as("probed").isPositive();
        assertThat(mode("swapped", ChatProtocol.MESSAGES)).isEqualTo(ProtocolMode.NATIVE);
        assertThat(mode("swapped", ChatProtocol.RESPONSES)).isEqualTo(ProtocolMode.NATIVE);
        swapped.refusing.set(true);
        int chats = swapped.posts("/v1/chat/completions");
        int llamaCalls = stats.stats("llama").calls();

        HttpResponse<String> whole = messages("swap", false);
        JsonNode answer = JSON.readTree(whole.body());
        assertThat(answer.get("type").asString()).isEqualTo("message");
        assertThat(answer.at("/content/0/text").asString()).isNotEmpty();
        assertThat(swapped.refused("/v1/messages")).isEqualTo(1);
        assertThat(swapped.posts("/v1/chat/completions")).isEqualTo(chats + 1);
        assertThat(mode("swapped", ChatProtocol.MESSAGES)).isEqualTo(ProtocolMode.TRANSLATE);
        assertThat(mode("swapped", ChatProtocol.RESPONSES)).as("learned per endpoint").isEqualTo(ProtocolMode.NATIVE);

        HttpResponse<String> streamed = responses("swap");
        assertThat(streamed.body()).contains("event: response.created").contains("event: response.output_text.delta")
                .contains("event: response.output_item.done").doesNotContain("response.failed")
                .containsAnyOf("event: response.completed", "event: response.incomplete"); // 4 tokens may end it
        assertThat(swapped.refused("/v1/responses")).isEqualTo(1);
        assertThat(mode("swapped", ChatProtocol.RESPONSES)).isEqualTo(ProtocolMode.TRANSLATE);

        assertThat(messages("swap", true).body()).contains("message_stop");
        assertThat(swapped.refused("/v1/messages")).as("remembered").isEqualTo(1);
        assertThat(swapped.posts("/v1/chat/completions")).isEqualTo(chats + 3);
        assertThat(breakers.breaker("swapped").getMetrics().getNumberOfFailedCalls()).isZero();
        assertThat(breakers.breaker("swapped").getState()).isEqualTo(CircuitBreaker.State.CLOSED);
        assertThat(stats.stats("swapped").failures()).isZero();
        assertThat(stats.stats("swapped").calls()).as("the three translated calls, not the 404s").isEqualTo(3);
        assertThat(stats.stats("llama").calls()).as("not failed over").isEqualTo(llamaCalls);
    }

    /** The backend's mode for {@code protocol} once its probe has found the server without it (bounded). */
    private ProtocolMode modeOnceProbed(String backend, ChatProtocol protocol) throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (mode(backend, protocol) == ProtocolMode.NATIVE && System.nanoTime() < until) {
            Thread.sleep(100);
        }
        return mode(backend, protocol);
    }

    private ProtocolMode mode(String backend, ChatProtocol protocol) {
        return backends.find(backend).orElseThrow().describe().capabilities().mode(protocol);
    }

    private HttpResponse<String> messages(String model, boolean stream) throws Exception {
        return post("/v1/messages", """
                {"model": "%s", "max_tokens": 4, "temperature": 0, "stream": %s,
                 "messages": [{"role": "user", "content": "Hi"}]}
                """.formatted(model, stream));
    }

    private HttpResponse<String> responses(String model) throws Exception {
        return post("/v1/responses", """
                {"model": "%s", "max_output_tokens": 4, "temperature": 0, "stream": true, "input": "Hi"}
                """.formatted(model));
    }

    private HttpResponse<String> post(String path, String body) throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + path))
                .header("content-type", "application/json").header("anthropic-version", "2023-06-01")
                .timeout(Duration.ofMinutes(1)).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return response;
    }
}
