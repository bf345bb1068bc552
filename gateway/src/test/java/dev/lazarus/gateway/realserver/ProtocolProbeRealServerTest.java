package dev.lazarus.gateway.realserver;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.tomakehurst.wiremock.WireMockServer;
import dev.lazarus.backend.api.ChatProtocol;
import dev.lazarus.backend.api.ProtocolMode;
import dev.lazarus.gateway.routing.BackendRegistry;
import dev.lazarus.kt.testsupport.LlamaServerProcess;
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
 * {@code messages: auto} and {@code responses: auto}: a real llama-server, which has both endpoints, is found to and
 * passed through to; an OpenAI-compatible upstream without them (WireMock: chat completions only, 404 elsewhere) is
 * translated for, and a Messages request to it is answered from its chat completions.
 */
@Tag("llama-server")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ProtocolProbeRealServerTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String CHAT_STREAM = """
            data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"old","choices":[{"index":0,\
            "delta":{"role":"assistant","content":"Hi there"},"finish_reason":null}]}

            data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"old","choices":[{"index":0,\
            "delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}

            data: [DONE]

            """;

    static LlamaServerProcess server;
    static WireMockServer older;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        server = RealLlamaServers.start();
        older = new WireMockServer(options().bindAddress("127.0.0.1").dynamicPort());
        older.start();
        older.stubFor(get(urlEqualTo("/v1/models")).willReturn(okJson("{\"object\":\"list\",\"data\":[{\"id\":\"old\","
                + "\"object\":\"model\"}]}")));
        older.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream").withBody(CHAT_STREAM)));
        RealLlamaServers.backend(registry, 0, "llama", server.url().toString());
        RealLlamaServers.backend(registry, 1, "older", "http://127.0.0.1:" + older.port());
        registry.add("lazarus.backends[1].kind", () -> "openai");
        for (int i = 0; i < 2; i++) {
            registry.add("lazarus.backends[" + i + "].settings.messages", () -> "auto");
            registry.add("lazarus.backends[" + i + "].settings.responses", () -> "auto");
        }
        RealLlamaServers.route(registry, 0, "tiny", "llama");
        RealLlamaServers.route(registry, 1, "old", "older");
    }

    @AfterAll
    static void stop() {
        older.stop();
        RealLlamaServers.stopAll();
    }

    @Autowired
    BackendRegistry backends;

    @LocalServerPort
    int port;

    @Test
    void llamaServerIsPassedThroughAndAServerWithoutTheEndpointsTranslatedFor() throws Exception {
        assertThat(modeOnceProbed("llama", ChatProtocol.MESSAGES)).isEqualTo(ProtocolMode.NATIVE);
        assertThat(modeOnceProbed("llama", ChatProtocol.RESPONSES)).isEqualTo(ProtocolMode.NATIVE);
        older.verify(postRequestedFor(urlEqualTo("/v1/messages")));
        older.verify(postRequestedFor(urlEqualTo("/v1/responses")));
        assertThat(mode("older", ChatProtocol.MESSAGES)).isEqualTo(ProtocolMode.TRANSLATE);
        assertThat(mode("older", ChatProtocol.RESPONSES)).isEqualTo(ProtocolMode.TRANSLATE);

        JsonNode native_ = messages("tiny");
        assertThat(native_.get("type").asString()).isEqualTo("message");
        int probes = older.countRequestsMatching(postRequestedFor(urlEqualTo("/v1/messages")).build()).getCount();
        JsonNode translated = messages("old");
        assertThat(translated.at("/content/0/text").asString()).isEqualTo("Hi there");
        assertThat(translated.get("stop_reason").asString()).isEqualTo("end_turn");
        older.verify(probes, postRequestedFor(urlEqualTo("/v1/messages")));
        older.verify(postRequestedFor(urlEqualTo("/v1/chat/completions")));
    }

    /** The backend's mode for {@code protocol} once its first health check has probed the server (bounded). */
    private ProtocolMode modeOnceProbed(String backend, ChatProtocol protocol) throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (mode(backend, protocol) != ProtocolMode.NATIVE && System.nanoTime() < until) {
            Thread.sleep(100);
        }
        return mode(backend, protocol);
    }

    private ProtocolMode mode(String backend, ChatProtocol protocol) {
        return backends.find(backend).orElseThrow().describe().capabilities().mode(protocol);
    }

    private JsonNode messages(String model) throws Exception {
        String body = """
                {"model": "%s", "max_tokens": 4, "temperature": 0, "messages": [{"role": "user", "content": "Hi"}]}
                """.formatted(model);
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + "/v1/messages"))
                .header("content-type", "application/json").header("anthropic-version", "2023-06-01")
                .timeout(Duration.ofMinutes(1)).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return JSON.readTree(response.body());
    }
}
