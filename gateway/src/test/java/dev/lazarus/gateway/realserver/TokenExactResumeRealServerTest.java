package dev.lazarus.gateway.realserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.testing.CapturedLogs;
import dev.lazarus.kt.testsupport.LlamaServerProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
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
 * Token-exact resume (issue 14): an answer cut mid-stream goes on on a second llama-server of the same
 * GGUF from the exact token ids generated so far (its {@code /completion} with a token prompt), and
 * the client's text equals an uninterrupted greedy run's, token for token, wherever the cut falls. The
 * first server's answers pass a {@link CuttingProxy} that ends the connection after a chosen event, so
 * the cut lands on the same token on any machine. The tiny generated model's greedy answers are runs of
 * odd vocabulary pieces ("ad", " p", "or") that a tokenizer given their text merges differently, so a
 * continuation from the re-tokenised text (a trailing assistant message) drifts from the original.
 * They also hold single bytes of unfinished UTF-8, whose ids llama-server does not stream: an answer
 * cut after such a gap is continued from its text, never from ids that skip a token.
 */
@Tag("llama-server")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class TokenExactResumeRealServerTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final int MAX_TOKENS = 64;
    private static final String PROMPT = "Tell me a long story about the sea.";

    static LlamaServerProcess first;
    static LlamaServerProcess second;
    static CuttingProxy proxy;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        first = RealLlamaServers.start();
        second = RealLlamaServers.start();
        proxy = new CuttingProxy(first.url());
        RealLlamaServers.backend(registry, 0, "first", proxy.url().toString());
        RealLlamaServers.backend(registry, 1, "second", second.url().toString());
        RealLlamaServers.route(registry, 0, "tiny", "first", "second");
        // Each cut is one failure of 'first': the breaker must not send the next request past it.
        registry.add("lazarus.resilience.breaker.minimum-number-of-calls", () -> "100");
    }

    @AfterAll
    static void stop() {
        proxy.close();
        RealLlamaServers.stopAll();
    }

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final CapturedLogs logs = new CapturedLogs();

    @BeforeEach
    void capture() {
        logs.start(List.of("dev.lazarus.llamacpp.LlamaCppBackend"));
    }

    @AfterEach
    void release() {
        logs.stop();
        proxy.cutAfter.set(0);
    }

    /** Cut after the role announcement and 1, 4, 13 and 30 tokens (one event each). */
    @ParameterizedTest
    @ValueSource(ints = {2, 5, 14, 31})
    void theResumedAnswerIsTheUninterruptedOne(int events) throws Exception {
        assertThat(events).as("cut before the answer's first token without a streamed id").isLessThan(firstGap());
        JsonNode reference = uninterrupted();
        String expected = reference.at("/choices/0/message/content").asString();
        assertThat(reference.at("/usage/completion_tokens").asInt()).as("the answer outlasts the cut")
                .isGreaterThan(events);

        int cutsBefore = proxy.cuts.get();
        proxy.cutAfter.set(events);
        List<String> stream = SseEvents.parse(post(true).body());
        assertThat(proxy.cuts.get()).as("the first server's answer was cut").isEqualTo(cutsBefore + 1);

        assertThat(stream).endsWith("[DONE]");
        List<JsonNode> chunks = stream.subList(0, stream.size() - 1).stream().map(JSON::readTree).toList();
        assertThat(chunks).noneMatch(c -> c.has("error"));
        StringBuilder text = new StringBuilder();
        chunks.forEach(c -> text.append(c.at("/choices/0/delta/content").asString("")));
        assertThat(text.toString()).as("resumed after %d events", events).isEqualTo(expected);
        assertThat(chunks).noneMatch(c -> c.at("/choices/0/logprobs").isObject());
        JsonNode usage = chunks.getLast().get("usage");
        assertThat(usage.get("completion_tokens").asInt()).isEqualTo(reference.at("/usage/completion_tokens").asInt());
        assertThat(usage.get("prompt_tokens").asInt()).isEqualTo(reference.at("/usage/prompt_tokens").asInt());
        assertThat(logs.events()).as("the second server went on from the token ids")
                .anyMatch(e -> e.getFormattedMessage().equals("backend 'second': continuing an answer from its "
                        + (events - 1) + " tokens"));
    }

    @Test
    void anAnswerCutAfterATokenWithoutItsIdGoesOnFromItsText() throws Exception {
        int events = firstGap() + 2;
        JsonNode reference = uninterrupted();
        assertThat(reference.at("/usage/completion_tokens").asInt()).as("the answer outlasts the cut")
                .isGreaterThan(events);
        proxy.cutAfter.set(events);
        List<String> stream = SseEvents.parse(post(true).body());

        assertThat(stream).endsWith("[DONE]");
        List<JsonNode> chunks = stream.subList(0, stream.size() - 1).stream().map(JSON::readTree).toList();
        assertThat(chunks).noneMatch(c -> c.has("error"));
        assertThat(chunks.getLast().at("/usage/completion_tokens").asInt()).isBetween(events - 1, MAX_TOKENS);
        assertThat(logs.events()).as("no continuation from ids that skip a token")
                .noneMatch(e -> e.getFormattedMessage().startsWith("backend 'second': continuing an answer"))
                .anyMatch(e -> e.getFormattedMessage().contains("resuming on 'second'"));
    }

    /**
     * The first event (the role announcement is event 1) of the first server's answer that carries a
     * token whose id was not streamed: its per-token count runs ahead of the ids seen so far.
     */
    private int firstGap() throws Exception {
        String body = """
                {"messages":[{"role":"user","content":"%s"}],"max_tokens":%d,"temperature":0,"stream":true,\
                "n_probs":1,"post_sampling_probs":true,"timings_per_token":true}""".formatted(PROMPT, MAX_TOKENS);
        List<String> events = SseEvents.parse(http.send(HttpRequest.newBuilder(first.url().resolve("/v1/chat/completions"))
                .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString()).body());
        int ids = 0;
        for (int i = 0; i < events.size() - 1; i++) {
            JsonNode chunk = JSON.readTree(events.get(i));
            ids += chunk.at("/choices/0/logprobs/content").size();
            if (chunk.at("/timings/predicted_n").asInt(0) > ids) {
                return i + 1;
            }
        }
        throw new AssertionError("the tiny model's answer streamed every id: no gap to cut after");
    }

    /** The same request answered by the first server directly, start to finish. */
    private JsonNode uninterrupted() throws Exception {
        HttpRequest request = HttpRequest.newBuilder(first.url().resolve("/v1/chat/completions"))
                .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body(false).replace("\"model\":\"tiny\",", "")))
                .build();
        HttpResponse<String> answer;
        try {
            answer = http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (java.io.IOException closed) {
            // this test's own client reused a kept-alive connection the server had closed (EOF before any
            // header, seen once in CI): the request never reached the server, so it is sent again
            answer = http.send(request, HttpResponse.BodyHandlers.ofString());
        }
        assertThat(answer.statusCode()).isEqualTo(200);
        return JSON.readTree(answer.body());
    }

    private HttpResponse<String> post(boolean stream) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
                .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body(stream))).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String body(boolean stream) {
        return """
                {"model":"tiny","messages":[{"role":"user","content":"%s"}],"max_tokens":%d,"temperature":0,\
                "stream":%s,"stream_options":{"include_usage":true}}""".formatted(PROMPT, MAX_TOKENS, stream)
                .replace(",\"stream_options\":{\"include_usage\":true}", stream ? ",\"stream_options\":{\"include_usage\":true}" : "");
    }
}
