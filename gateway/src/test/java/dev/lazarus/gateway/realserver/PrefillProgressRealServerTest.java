package dev.lazarus.gateway.realserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.resilience.BackendBreakers;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.synthetic.SyntheticModels;
import dev.lazarus.kt.testsupport.LlamaServerProcess;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
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
 * A prompt that a real llama-server reads for several times the first-token limit, in small batches (one thread,
 * {@code -ub 16}), as an agent's long prompt on a CPU is read: the gateway asks for llama-server's progress, and
 * each batch read starts the limit again, so the answer comes through in one attempt that its breaker counts as no
 * failure; the client sees none of the progress (chat: one role chunk; Responses, passed through: one
 * {@code response.created}, one {@code response.in_progress}). The same request with {@code "return_progress": false}
 * (a server that sends no progress) is cut at the limit as before. A Messages stream passed through, on which
 * llama-server sends no progress, is kept by what its {@code /slots} say of the prompt's reading.
 *
 * <p>The limit is set from the server measured on this host before the gateway starts: a third of the prompt's
 * reading, which is some 35 batches on any host, so that the longest wait for one is well within it even on a busy
 * machine.
 */
@Tag("llama-server")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "lazarus.health.interval=10m", "lazarus.resilience.attempt.retries=0"})
class PrefillProgressRealServerTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    /** Words that the tiny vocabulary reads as some 580 tokens (a chat's): over 35 batches of 16. */
    private static final int WORDS = 170;
    private static final AtomicInteger NONCE = new AtomicInteger();

    static Path dir;
    static LlamaServerProcess server;
    /** The prompt's reading as measured, and the longest wait for a batch. */
    static Duration reading;
    static Duration longestBatch;
    static Duration limit;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) throws IOException {
        dir = Files.createTempDirectory("lazarus-prefill-progress");
        // wide enough that a batch of 16 takes a noticeable time on one thread, small enough to write in seconds
        Path model = SyntheticModels.write(new SyntheticModels.Spec("prefill-llama", "llama", GgmlType.F16, 12, 4,
                1024, 8, 2, 128, 2816, null, null, 500_000f, null, 4096, 1e-5f, false), dir.resolve("prefill.gguf"));
        server = LlamaServerProcess.start(model, "-c", "4096", "--parallel", "1", "--threads", "1",
                "-b", "16", "-ub", "16", "--jinja", "--no-webui");
        measure();
        limit = reading.dividedBy(3);
        assertThat(longestBatch.multipliedBy(3).dividedBy(2))
                .as("the longest wait for a batch (%s) must be well within the limit (%s)", longestBatch, limit)
                .isLessThan(limit);
        RealLlamaServers.backend(registry, 0, "cpu", server.url().toString());
        registry.add("lazarus.backends[0].settings.first-token-timeout", () -> limit.toMillis() + "ms");
        registry.add("lazarus.backends[0].settings.responses", () -> "native");
        registry.add("lazarus.backends[0].settings.messages", () -> "native");
        registry.add("lazarus.resilience.attempt.first-token-timeout", () -> limit.toMillis() + "ms");
        RealLlamaServers.route(registry, 0, "long-prompt", "cpu");
    }

    /** One direct request that asks for progress: how long the prompt is read, and the longest gap in that. */
    private static void measure() {
        List<Long> arrivals = new ArrayList<>();
        long start = System.nanoTime();
        long[] firstToken = {-1};
        stream(server.url() + "/v1/chat/completions", chat("any", true), line -> {
            long now = System.nanoTime();
            if (line.contains("\"prompt_progress\"")) {
                arrivals.add(now);
            } else if (line.contains("\"content\":\"") && firstToken[0] < 0) {
                firstToken[0] = now;
                arrivals.add(now);
            }
        });
        assertThat(arrivals.size()).as("progress events").isGreaterThan(10);
        long longest = 0;
        for (int i = 1; i < arrivals.size(); i++) {
            longest = Math.max(longest, arrivals.get(i) - arrivals.get(i - 1));
        }
        reading = Duration.ofNanos(firstToken[0] - start);
        longestBatch = Duration.ofNanos(longest);
    }

    @AfterAll
    static void stop() throws IOException {
        if (server != null) {
            server.close();
        }
        if (dir != null) {
            try (var files = Files.list(dir)) {
                for (Path file : files.toList()) {
                    Files.delete(file); // the model: some 90 MB
                }
            }
            Files.delete(dir);
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    BackendBreakers breakers;

    @Test
    void aChatPromptReadForSeveralLimitsIsAnsweredInOneAttemptWithoutItsProgress() {
        CircuitBreaker breaker = breakers.breaker("cpu");
        int calls = breaker.getMetrics().getNumberOfBufferedCalls();
        int failures = breaker.getMetrics().getNumberOfFailedCalls();
        long start = System.nanoTime();
        List<String> lines = new ArrayList<>();
        int status = stream(gateway() + "/v1/chat/completions", chat("long-prompt", null), lines::add);
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertThat(status).as(String.join("\n", lines)).isEqualTo(200);
        assertThat(took).as("the prompt was read for longer than the limit").isGreaterThan(limit.multipliedBy(3).dividedBy(2));
        List<JsonNode> chunks = chunks(lines);
        assertThat(chunks).as(String.join("\n", lines)).noneMatch(c -> c.has("prompt_progress"));
        assertThat(chunks.stream().filter(c -> c.at("/choices/0/delta/role").isString())).as("role chunks").hasSize(1);
        assertThat(chunks.stream().map(c -> c.at("/choices/0/delta/content").asString("")).reduce("", String::concat))
                .isNotEmpty();
        assertThat(chunks.getLast().at("/usage/prompt_tokens").asInt()).isGreaterThan(30 * 16);
        assertThat(breaker.getMetrics().getNumberOfBufferedCalls()).as("one attempt").isEqualTo(calls + 1);
        assertThat(breaker.getMetrics().getNumberOfFailedCalls()).as("no failure charged").isEqualTo(failures);
    }

    @Test
    void aResponsesStreamPassedThroughOpensOnceAndCarriesNoProgress() {
        CircuitBreaker breaker = breakers.breaker("cpu");
        int failures = breaker.getMetrics().getNumberOfFailedCalls();
        long start = System.nanoTime();
        List<String> lines = new ArrayList<>();
        String body = """
                {"model": "long-prompt", "max_output_tokens": 4, "temperature": 0, "stream": true, "store": false,
                 "cache_prompt": false, "input": %s}
                """.formatted(JSON.writeValueAsString(prompt()));
        int status = stream(gateway() + "/v1/responses", body, lines::add);
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertThat(status).as(String.join("\n", lines)).isEqualTo(200);
        assertThat(took).isGreaterThan(limit.multipliedBy(3).dividedBy(2));
        List<String> names = lines.stream().filter(l -> l.startsWith("event: ")).map(l -> l.substring(7)).toList();
        assertThat(names).as(String.join("\n", lines)).startsWith("response.created", "response.in_progress")
                .doesNotContain("error", "response.failed");
        assertThat(names.stream().filter("response.in_progress"::equals)).hasSize(1);
        assertThat(names.stream().filter("response.created"::equals)).hasSize(1);
        assertThat(names).contains("response.output_text.delta");
        assertThat(lines).noneMatch(l -> l.contains("prompt_progress"));
        assertThat(breaker.getMetrics().getNumberOfFailedCalls()).isEqualTo(failures);
    }

    /** llama-server sends no progress on /v1/messages: its slots tell how far the prompt is read instead. */
    @Test
    void aMessagesStreamPassedThroughIsWaitedForWhileItsSlotReadsThePrompt() {
        CircuitBreaker breaker = breakers.breaker("cpu");
        int calls = breaker.getMetrics().getNumberOfBufferedCalls();
        int failures = breaker.getMetrics().getNumberOfFailedCalls();
        long start = System.nanoTime();
        List<String> lines = new ArrayList<>();
        String body = """
                {"model": "long-prompt", "max_tokens": 4, "temperature": 0, "stream": true,
                 "messages": [{"role": "user", "content": %s}]}
                """.formatted(JSON.writeValueAsString(prompt()));
        int status = stream(gateway() + "/v1/messages", body, lines::add);
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertThat(status).as(String.join("\n", lines)).isEqualTo(200);
        assertThat(took).as("the prompt was read for longer than the limit").isGreaterThan(limit.multipliedBy(3).dividedBy(2));
        List<String> names = lines.stream().filter(l -> l.startsWith("event: ")).map(l -> l.substring(7)).toList();
        assertThat(names).as(String.join("\n", lines)).contains("content_block_delta", "message_delta")
                .endsWith("message_stop").doesNotContain("error");
        assertThat(names.stream().filter("message_start"::equals)).hasSize(1);
        assertThat(breaker.getMetrics().getNumberOfBufferedCalls()).as("one attempt").isEqualTo(calls + 1);
        assertThat(breaker.getMetrics().getNumberOfFailedCalls()).as("no failure charged").isEqualTo(failures);
    }

    @Test
    void withoutProgressTheSamePromptIsCutAtTheLimit() {
        CircuitBreaker breaker = breakers.breaker("cpu");
        int failures = breaker.getMetrics().getNumberOfFailedCalls();
        long start = System.nanoTime();
        List<String> lines = new ArrayList<>();
        int status = stream(gateway() + "/v1/chat/completions", chat("long-prompt", false), lines::add);
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertThat(status).as(String.join("\n", lines)).isEqualTo(503);
        assertThat(String.join("\n", lines)).contains("tried cpu (timeout)");
        assertThat(took).as("cut at the limit, before the prompt was read").isGreaterThanOrEqualTo(limit)
                .isLessThan(reading);
        assertThat(breaker.getMetrics().getNumberOfFailedCalls()).as("the cut charged").isEqualTo(failures + 1);
    }

    private String gateway() {
        return "http://127.0.0.1:" + port;
    }

    /** A new prompt each time (a different first word), so that no cache shortens its reading. */
    private static String prompt() {
        StringBuilder words = new StringBuilder("n" + NONCE.incrementAndGet());
        for (int i = 0; i < WORDS; i++) {
            words.append(" w").append(i);
        }
        return words.toString();
    }

    private static String chat(String model, Boolean progress) {
        return """
                {"model": %s, "max_tokens": 4, "temperature": 0, "stream": true, "cache_prompt": false,%s
                 "stream_options": {"include_usage": true},
                 "messages": [{"role": "user", "content": %s}]}
                """.formatted(JSON.writeValueAsString(model),
                progress == null ? "" : " \"return_progress\": " + progress + ",", JSON.writeValueAsString(prompt()));
    }

    private static List<JsonNode> chunks(List<String> lines) {
        return lines.stream().filter(l -> l.startsWith("data: {")).map(l -> JSON.readTree(l.substring(6))).toList();
    }

    /** POSTs {@code body} and hands each line of the answer to {@code line} as it comes; the status. */
    private static int stream(String url, String body, java.util.function.Consumer<String> line) {
        try {
            HttpResponse<InputStream> response = HTTP.send(HttpRequest.newBuilder(URI.create(url))
                    .header("content-type", "application/json").timeout(Duration.ofMinutes(3))
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofInputStream());
            try (BufferedReader in = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
                for (String l; (l = in.readLine()) != null; ) {
                    line.accept(l);
                }
            }
            return response.statusCode();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
