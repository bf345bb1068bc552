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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Pooled connections to a real llama-server across its connection limits (issue 14, finding 1).
 * llama-server (cpp-httplib) ends the TCP connection right after every streamed answer although its
 * headers promise {@code Keep-Alive: timeout=5, max=100}, and drops idle ones after 5 s. A connection
 * the pool hands out at that moment takes the next request into a closed socket. A pool of two
 * connections under more concurrent requests than that makes the hand-over immediate, which is the
 * race the SDK and SIGKILL runs lost requests to. Route {@code tiny} has the backend's defaults
 * ({@code reuse-stream-connections: auto}: kept until llama-server is seen ending one, closed from then on);
 * {@code tiny-reuse} keeps streamed connections in the pool, so only the retry on a new connection
 * stands between the race and the client.
 */
@Tag("llama-server")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ConnectionReuseRealServerTest {

    static LlamaServerProcess server;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        server = RealLlamaServers.startParallel(2, 256);
        RealLlamaServers.backend(registry, 0, "llama", server.url().toString());
        registry.add("lazarus.backends[0].settings.max-connections", () -> "2");
        RealLlamaServers.backend(registry, 1, "llama-reuse", server.url().toString());
        registry.add("lazarus.backends[1].settings.max-connections", () -> "2");
        registry.add("lazarus.backends[1].settings.reuse-stream-connections", () -> "true");
        RealLlamaServers.route(registry, 0, "tiny", "llama");
        RealLlamaServers.route(registry, 1, "tiny-reuse", "llama-reuse");
        // Queued behind two slots on a shared machine, first tokens come late: that is not what is
        // tested here, and a breaker opened for slowness would hide the connection failures.
        registry.add("lazarus.resilience.breaker.slow-time-to-first-token", () -> "1m");
        // Every failure counts here: one is enough to fail the test, none may be absorbed by retries.
        registry.add("lazarus.resilience.attempt.retries", () -> "0");
    }

    @AfterAll
    static void stopServers() {
        RealLlamaServers.stopAll();
    }

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private HttpResponse<String> chat(String model, boolean stream) throws Exception {
        String body = """
                {"model":"%s","messages":[{"role":"user","content":"Tell me about the sea."}],
                 "max_tokens":6,"temperature":0,"stream":%s}""".formatted(model, stream);
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
                .header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private static void assertAnswered(HttpResponse<String> response, boolean stream) {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        if (stream) {
            assertThat(SseEvents.parse(response.body()).getLast()).isEqualTo("[DONE]");
            assertThat(response.body()).doesNotContain("\"error\"");
        } else {
            assertThat(response.body()).contains("\"finish_reason\"");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tiny", "tiny-reuse"})
    void manySequentialRequestsAllSucceed(String model) throws Exception {
        for (int i = 0; i < 40; i++) {
            boolean stream = i % 2 == 0;
            assertAnswered(chat(model, stream), stream);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tiny", "tiny-reuse"})
    void concurrentRequestsBeyondThePoolAndTheSlotsAllSucceed(String model) throws Exception {
        // Five clients: more than the pool's two connections and llama-server's two slots, fewer than the
        // pool lets wait (twice its size; with six, its "all connections busy" 429 was seen at times).
        try (ExecutorService clients = Executors.newFixedThreadPool(5)) {
            List<Future<?>> done = new ArrayList<>();
            for (int c = 0; c < 5; c++) {
                int client = c;
                done.add(clients.submit(() -> {
                    for (int i = 0; i < 10; i++) {
                        boolean stream = (client + i) % 2 == 0;
                        assertAnswered(chat(model, stream), stream);
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        }
    }

    @Test
    void requestsAfterLlamaServersKeepAliveTimeoutSucceed() throws Exception {
        assertAnswered(chat("tiny-reuse", false), false);
        assertAnswered(chat("tiny", false), false);
        Thread.sleep(5_300); // past llama-server's 5 s keep-alive: idle connections are gone upstream
        for (String model : new String[] {"tiny-reuse", "tiny"}) {
            assertAnswered(chat(model, false), false);
            assertAnswered(chat(model, true), true);
        }
    }
}
