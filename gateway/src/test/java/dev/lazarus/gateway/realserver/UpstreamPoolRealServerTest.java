package dev.lazarus.gateway.realserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.testsupport.LlamaServerProcess;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The upstream connection pool does not hold streams back: with the backend's pool left at its default (the
 * gateway's {@code lazarus.connections.max}), 32 concurrent streams through the gateway to one llama-server with 32
 * slots all get their first token before any of them ends. (A pool smaller than the load makes a stream wait for a
 * connection until an answer ends: {@code max-connections: 4} fails this on a four-loop gateway.)
 */
@Tag("llama-server")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class UpstreamPoolRealServerTest {

    private static final int STREAMS = 32;
    private static final int MAX_TOKENS = 256;

    static LlamaServerProcess server;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        server = RealLlamaServers.startParallel(STREAMS, MAX_TOKENS + 64);
        RealLlamaServers.backend(registry, 0, "llama", server.url().toString());
        RealLlamaServers.route(registry, 0, "tiny", "llama");
        registry.add("lazarus.resilience.attempt.first-token-timeout", () -> "2m");
        registry.add("lazarus.resilience.breaker.slow-time-to-first-token", () -> "2m");
        registry.add("lazarus.resilience.breaker.min-throughput", () -> "0.1");
    }

    @AfterAll
    static void stop() {
        RealLlamaServers.stopAll();
    }

    @LocalServerPort
    int port;

    /** When a stream's first content came and when it ended, in nanoseconds. */
    private record Timing(long first, long end) {}

    @Test
    void everyConcurrentStreamStartsBeforeAnyEnds() throws Exception {
        String body = """
                {"model": "tiny", "stream": true, "max_tokens": %d, "ignore_eos": true, "temperature": 0,
                 "messages": [{"role": "user", "content": "Tell me a long story about the sea."}]}""".formatted(MAX_TOKENS);
        List<Timing> timings = new ArrayList<>();
        try (HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
                ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Timing>> streams = new ArrayList<>();
            for (int i = 0; i < STREAMS; i++) {
                streams.add(clients.submit(() -> stream(http, body)));
            }
            for (Future<Timing> stream : streams) {
                timings.add(stream.get());
            }
        }
        long lastStart = timings.stream().mapToLong(Timing::first).max().orElseThrow();
        long firstEnd = timings.stream().mapToLong(Timing::end).min().orElseThrow();
        assertThat(lastStart).as("the last stream's first token (ns) came before the first stream ended")
                .isLessThan(firstEnd);
    }

    private Timing stream(HttpClient http, String body) throws Exception {
        HttpResponse<InputStream> response = http.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
                .timeout(Duration.ofMinutes(3)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(response.statusCode()).isEqualTo(200);
        long first = 0;
        boolean done = false;
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                if (first == 0 && line.startsWith("data: ") && line.contains("\"content\"")) {
                    first = System.nanoTime();
                }
                done |= line.equals("data: [DONE]");
            }
        }
        assertThat(first).as("a token came").isPositive();
        assertThat(done).as("the stream ended with [DONE]").isTrue();
        return new Timing(first, System.nanoTime());
    }
}
