package dev.lazarus.gateway.realserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.api.OpenAiController;
import dev.lazarus.kt.testsupport.LlamaServerProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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
 * The SIGKILL run for the Messages API: concurrent Messages streams through the gateway to a llama-server that is
 * SIGKILLed once each has its first token, with a second llama-server of the same GGUF behind it. The killed server's
 * own Messages stream ({@code messages} left at {@code auto}) goes on as chat on the survivor, and every client sees
 * one continuous Messages stream: one {@code message_start}, one text block, no {@code error} event,
 * {@code message_delta} and {@code message_stop} at the end, and the answer's start as an uninterrupted greedy run
 * gives it ({@link TranslatedMessagesSigkillResumeRealServerTest}: the same with the victim's Messages translated).
 */
@Tag("llama-server")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class MessagesSigkillResumeRealServerTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final int STREAMS = 6;
    private static final int MAX_TOKENS = 256;
    private static final String PROMPT = "Tell me a long story about the sea.";
    private static final Duration KILL_AT = Duration.ofMillis(500);

    static LlamaServerProcess survivor;
    static LlamaServerProcess victim;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        survivor = RealLlamaServers.startParallel(STREAMS, MAX_TOKENS + 64);
        // One thread: the answers last long enough for the kill to find them on any machine.
        victim = RealLlamaServers.startParallel(STREAMS, MAX_TOKENS + 64, "--threads", "1");
        RealLlamaServers.backend(registry, 0, "survivor", survivor.url().toString());
        RealLlamaServers.backend(registry, 1, "victim", victim.url().toString());
        RealLlamaServers.route(registry, 0, "sea", "victim", "survivor");
        registry.add("lazarus.routing.overall-timeout", () -> "5m");
        registry.add("lazarus.resilience.attempt.first-token-timeout", () -> "2m");
        registry.add("lazarus.resilience.breaker.slow-time-to-first-token", () -> "1m");
        registry.add("lazarus.resilience.breaker.min-throughput", () -> "0.1");
    }

    @AfterAll
    static void stopServers() {
        RealLlamaServers.stopAll();
    }

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void everyMessagesStreamCompletesAsOneWhenTheServingLlamaServerIsKilled() throws Exception {
        String expected = uninterrupted();
        CountDownLatch firstTokens = new CountDownLatch(STREAMS);
        AtomicBoolean killed = new AtomicBoolean();
        List<Future<Stream>> futures = new ArrayList<>();
        try (ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
            long sent = System.nanoTime();
            for (int i = 0; i < STREAMS; i++) {
                futures.add(clients.submit(() -> stream(firstTokens, killed)));
            }
            assertThat(firstTokens.await(2, TimeUnit.MINUTES)).as("every stream has its first token").isTrue();
            long wait = KILL_AT.toNanos() - (System.nanoTime() - sent);
            if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
            }
            victim.kill();
            killed.set(true);
            int interrupted = 0;
            for (Future<Stream> future : futures) {
                Stream stream = future.get(5, TimeUnit.MINUTES);
                assertOneMessage(stream.events(), expected);
                interrupted += stream.finishedBeforeKill() ? 0 : 1;
            }
            assertThat(interrupted).as("streams the kill interrupted").isPositive();
        }
        assertThat(victim.isAlive()).isFalse();
    }

    /** One stream's events (data payloads), and whether its message_delta had come before the kill. */
    record Stream(List<JsonNode> events, boolean finishedBeforeKill) {}

    private Stream stream(CountDownLatch firstTokens, AtomicBoolean killed) throws Exception {
        String body = """
                {"model":"sea","max_tokens":%d,"temperature":0,"stream":true,\
                "messages":[{"role":"user","content":"%s"}]}""".formatted(MAX_TOKENS, PROMPT);
        HttpResponse<java.util.stream.Stream<String>> response = http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/messages"))
                        .timeout(Duration.ofMinutes(5)).header("Content-Type", "application/json")
                        .header("anthropic-version", "2023-06-01")
                        .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofLines());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue(OpenAiController.SERVED_BY_HEADER)).as("started on the victim")
                .contains("victim");
        List<JsonNode> events = new ArrayList<>();
        boolean[] started = {false};
        boolean[] finishedBeforeKill = {false};
        try {
            response.body().filter(line -> line.startsWith("data: ")).forEach(line -> {
                JsonNode event = JSON.readTree(line.substring("data: ".length()));
                events.add(event);
                String type = event.get("type").asString();
                finishedBeforeKill[0] |= !killed.get() && type.equals("message_delta");
                if (!started[0] && type.equals("content_block_delta")) {
                    started[0] = true;
                    firstTokens.countDown();
                }
            });
        } finally {
            if (!started[0]) {
                firstTokens.countDown();
            }
        }
        return new Stream(events, finishedBeforeKill[0]);
    }

    private static void assertOneMessage(List<JsonNode> events, String expected) {
        List<String> types = events.stream().map(e -> e.get("type").asString()).toList();
        assertThat(types).as("no error event").doesNotContain("error");
        assertThat(types.getFirst()).isEqualTo("message_start");
        assertThat(types.stream().filter("message_start"::equals)).hasSize(1);
        assertThat(types.stream().filter("content_block_start"::equals)).as("one text block").hasSize(1);
        assertThat(types.subList(types.size() - 3, types.size()))
                .containsExactly("content_block_stop", "message_delta", "message_stop");
        JsonNode delta = events.get(types.size() - 2);
        assertThat(delta.at("/delta/stop_reason").asString()).isIn("end_turn", "max_tokens");
        assertThat(delta.at("/usage/output_tokens").asInt()).isBetween(1, MAX_TOKENS);
        StringBuilder text = new StringBuilder();
        events.stream().filter(e -> e.at("/delta/type").asString("").equals("text_delta"))
                .forEach(e -> text.append(e.at("/delta/text").asString()));
        assertThat(text.length()).as("as long as an answer").isGreaterThan(expected.length() / 4);
        assertThat(expected).as("the answer's start as an uninterrupted greedy run gives it")
                .startsWith(text.substring(0, Math.min(text.length(), 24)));
    }

    /** The answer the survivor gives the same request, start to finish. */
    private String uninterrupted() throws Exception {
        String body = """
                {"messages":[{"role":"user","content":"%s"}],"max_tokens":%d,"temperature":0}"""
                .formatted(PROMPT, MAX_TOKENS);
        HttpResponse<String> answer = http.send(HttpRequest.newBuilder(survivor.url().resolve("/v1/chat/completions"))
                .timeout(Duration.ofSeconds(120)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(answer.statusCode()).isEqualTo(200);
        return JSON.readTree(answer.body()).at("/choices/0/message/content").asString();
    }
}
