package dev.lazarus.gateway.realserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.testsupport.LlamaServerProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
 * The headline feature against real processes: many clients stream from a llama-server that is
 * killed with SIGKILL once every stream has received tokens. In {@code resume} mode every stream
 * goes on on the second llama-server and ends well-formed; in {@code error} mode every client gets
 * an error event and {@code [DONE]}, and none hangs.
 */
@Tag("llama-server")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class MidStreamFailoverRealServerTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final int STREAMS = 24;
    private static final int MAX_TOKENS = 128;
    private static final String PROMPT = "Tell me a long story about the sea.";

    static LlamaServerProcess steady;
    static LlamaServerProcess resumeVictim;
    static LlamaServerProcess errorVictim;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        // The fallback's chat template adds a default system prompt (as Qwen2.5's does) where the
        // victim's adds none: its count of the continuation's prompt says nothing exact about the
        // original prompt's, which the resumed stream still owes the client (issue 14, finding 3).
        steady = RealLlamaServers.startParallel(STREAMS, 192, "--chat-template-file", defaultSystemPromptTemplate());
        resumeVictim = RealLlamaServers.startParallel(STREAMS, 192);
        errorVictim = RealLlamaServers.startParallel(STREAMS, 192);
        RealLlamaServers.backend(registry, 0, "steady", steady.url().toString());
        RealLlamaServers.backend(registry, 1, "resume-victim", resumeVictim.url().toString());
        RealLlamaServers.backend(registry, 2, "error-victim", errorVictim.url().toString());
        RealLlamaServers.route(registry, 0, "tiny-resume", "resume-victim", "steady");
        RealLlamaServers.route(registry, 1, "tiny-error", "error-victim", "steady");
        registry.add("lazarus.models[1].mid-stream", () -> "error");
        for (int i = 0; i < 3; i++) {
            // One connection per stream: none of them waits for a pooled one.
            registry.add("lazarus.backends[" + i + "].settings.max-connections", () -> STREAMS + 8);
        }
        registry.add("lazarus.routing.overall-timeout", () -> "60s");
        registry.add("lazarus.health.interval", () -> "500ms");
    }

    private static String defaultSystemPromptTemplate() {
        try {
            Path template = Files.createTempFile("lazarus-default-system", ".jinja");
            Files.writeString(template, """
                    {%- if messages[0].role != 'system' -%}\
                    {{- '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' -}}{%- endif -%}\
                    {%- for m in messages -%}{{- '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' -}}{%- endfor -%}\
                    {%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}""");
            return template.toString();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @AfterAll
    static void stopServers() {
        RealLlamaServers.stopAll();
    }

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** One client's stream as it arrived: its data payloads, and how many came before the kill. */
    record Stream(List<String> events, int beforeKill) {}

    @Test
    void everyStreamSurvivesTheKillInResumeMode() throws Exception {
        int uninterruptedPrompt = uninterruptedPromptTokens();
        List<Stream> streams = streamWhileKilling("tiny-resume", resumeVictim);

        int interrupted = 0;
        for (Stream stream : streams) {
            List<String> events = stream.events();
            assertThat(events).as("stream ends with one [DONE]").endsWith("[DONE]");
            assertThat(events.stream().filter("[DONE]"::equals)).hasSize(1);
            List<JsonNode> chunks = events.subList(0, events.size() - 1).stream().map(JSON::readTree).toList();
            assertThat(chunks).noneMatch(c -> c.has("error"));
            Set<String> ids = new HashSet<>();
            chunks.forEach(c -> ids.add(c.get("id").asString()));
            assertThat(ids).as("one id per stream").hasSize(1);
            assertThat(chunks.stream().filter(c -> c.at("/choices/0/delta/role").isString()))
                    .as("one role announcement").hasSizeLessThanOrEqualTo(1);
            List<String> finishes = chunks.stream().map(c -> c.at("/choices/0/finish_reason"))
                    .filter(JsonNode::isString).map(JsonNode::asString).toList();
            assertThat(finishes).as("one finish_reason").hasSize(1);
            assertThat(chunks).allSatisfy(c -> {
                if (c.at("/choices/0/index").isNumber()) {
                    assertThat(c.at("/choices/0/index").asInt()).isZero();
                }
            });
            JsonNode usage = chunks.getLast().get("usage");
            assertThat(usage).as("usage comes last").isNotNull();
            int completion = usage.get("completion_tokens").asInt();
            assertThat(completion).isBetween(1, MAX_TOKENS);
            if (finishes.getFirst().equals("length")) {
                assertThat(completion).isEqualTo(MAX_TOKENS);
            }
            assertThat(usage.get("total_tokens").asInt())
                    .isEqualTo(usage.get("prompt_tokens").asInt() + completion);
            // Issue 14, finding 3: the original prompt, not the continuation's with the text so far in it.
            assertThat(usage.get("prompt_tokens").asInt()).as("prompt_tokens as in an uninterrupted run")
                    .isEqualTo(uninterruptedPrompt);
            boolean finishedBeforeKill = events.subList(0, stream.beforeKill()).stream()
                    .anyMatch(e -> e.contains("\"finish_reason\":\""));
            if (!finishedBeforeKill) {
                interrupted++;
                long contentAfter = events.subList(stream.beforeKill(), events.size() - 1).stream()
                        .filter(e -> e.contains("\"content\":\"") && !e.contains("\"content\":\"\""))
                        .count();
                assertThat(contentAfter > 0 || finishes.getFirst().equals("stop"))
                        .as("the answer continues after the kill").isTrue();
            }
        }
        assertThat(streams).as("started = completed, none lost").hasSize(STREAMS);
        assertThat(interrupted).as("streams the kill interrupted").isPositive();
        assertThat(metric("lazarus_stream_resumes_total", "tiny-resume")).as("streams resumed").isPositive();
    }

    @Test
    void everyClientGetsAnErrorEventInErrorMode() throws Exception {
        List<Stream> streams = streamWhileKilling("tiny-error", errorVictim);
        int errors = 0;
        for (Stream stream : streams) {
            List<String> events = stream.events();
            assertThat(events).endsWith("[DONE]");
            assertThat(events.stream().filter("[DONE]"::equals)).hasSize(1);
            JsonNode last = JSON.readTree(events.get(events.size() - 2));
            if (last.has("error")) {
                assertThat(last.at("/error/type").asString()).isEqualTo("server_error");
                assertThat(last.at("/error/message").asString()).isNotBlank();
                errors++;
            } else {
                // Served whole (by the victim before the kill, or by the fallback before a first token).
                assertThat(events).anyMatch(e -> e.contains("\"finish_reason\":\""));
                assertThat(last.get("usage")).isNotNull();
            }
        }
        assertThat(streams).hasSize(STREAMS);
        assertThat(errors).as("clients told of the failure").isPositive();
        assertThat(errors).isEqualTo((int) metric("lazarus_stream_interruptions_total", "tiny-error"));
    }

    /** The prompt's size as the route's first backend counts it for the same request answered without a failure. */
    private int uninterruptedPromptTokens() throws Exception {
        String body = """
                {"messages":[{"role":"user","content":"%s"}],"max_tokens":1,"temperature":0}""".formatted(PROMPT);
        HttpResponse<String> answer = http.send(HttpRequest.newBuilder(resumeVictim.url().resolve("/v1/chat/completions"))
                .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(answer.statusCode()).isEqualTo(200);
        int prompt = JSON.readTree(answer.body()).at("/usage/prompt_tokens").asInt();
        assertThat(prompt).isPositive();
        return prompt;
    }

    /** The sum of a counter's series for {@code model} on the gateway's Prometheus page. */
    private double metric(String name, String model) throws Exception {
        String page = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/prometheus"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body();
        return page.lines()
                .filter(l -> l.startsWith(name + "{") && l.contains("model=\"" + model + "\""))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
                .sum();
    }

    /**
     * Starts {@link #STREAMS} streaming requests, SIGKILLs {@code victim} once each has received a
     * content token, and returns every stream in full (each read bounded by a timeout).
     */
    private List<Stream> streamWhileKilling(String model, LlamaServerProcess victim) throws Exception {
        CountDownLatch allStarted = new CountDownLatch(STREAMS);
        CountDownLatch killed = new CountDownLatch(1);
        AtomicInteger completed = new AtomicInteger();
        String body = """
                {"model":"%s","messages":[{"role":"user","content":"%s"}],
                 "max_tokens":%d,"temperature":0,"stream":true,"stream_options":{"include_usage":true}}"""
                .formatted(model, PROMPT, MAX_TOKENS);
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
                .timeout(Duration.ofSeconds(90))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        List<Future<Stream>> futures = new ArrayList<>();
        try (ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < STREAMS; i++) {
                futures.add(clients.submit(() -> {
                    List<String> events = new ArrayList<>();
                    int[] beforeKill = {-1};
                    boolean[] counted = {false};
                    HttpResponse<java.util.stream.Stream<String>> response =
                            http.send(request, HttpResponse.BodyHandlers.ofLines());
                    assertThat(response.statusCode()).isEqualTo(200);
                    response.body().filter(line -> line.startsWith("data: ")).forEach(line -> {
                        if (beforeKill[0] < 0 && killed.getCount() == 0) {
                            beforeKill[0] = events.size();
                        }
                        events.add(line.substring("data: ".length()));
                        if (!counted[0] && line.contains("\"content\":\"") && !line.contains("\"content\":\"\"")) {
                            counted[0] = true;
                            allStarted.countDown();
                        }
                    });
                    if (!counted[0]) {
                        allStarted.countDown();
                    }
                    completed.incrementAndGet();
                    return new Stream(events, beforeKill[0] < 0 ? events.size() : beforeKill[0]);
                }));
            }
            assertThat(allStarted.await(60, TimeUnit.SECONDS)).as("every stream received a token").isTrue();
            victim.kill();
            killed.countDown();
            List<Stream> streams = new ArrayList<>();
            for (Future<Stream> f : futures) {
                streams.add(f.get(90, TimeUnit.SECONDS));
            }
            assertThat(completed.get()).isEqualTo(STREAMS);
            return streams;
        } catch (UncheckedIOException e) {
            throw new IOException(e);
        }
    }
}
