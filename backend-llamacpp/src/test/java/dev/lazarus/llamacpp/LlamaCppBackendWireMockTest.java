package dev.lazarus.llamacpp;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.http.Fault;
import com.github.tomakehurst.wiremock.stubbing.Scenario;
import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.backend.api.WholeAnswer;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.CompletionRequest;
import io.netty.channel.EventLoop;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The upstream shapes a real llama-server cannot be made to produce on demand. */
class LlamaCppBackendWireMockTest {

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String CHAT = "/v1/chat/completions";
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private static WireMockServer wm;
    private LlamaCppBackend backend;

    @BeforeAll
    static void startWireMock() {
        wm = new WireMockServer(options().bindAddress("127.0.0.1").dynamicPort().asynchronousResponseEnabled(true));
        wm.start();
    }

    @AfterAll
    static void stopWireMock() {
        wm.stop();
    }

    @BeforeEach
    void newBackend() {
        wm.resetAll();
        backend = backend(Map.of());
    }

    @AfterEach
    void closeBackend() {
        backend.close();
    }

    private static LlamaCppBackend backend(Map<String, Object> overrides) {
        Map<String, Object> settings = new HashMap<>(Map.of("url", wm.baseUrl(), "model-name", "tiny",
                "first-token-timeout", "5s", "idle-timeout", "5s", "connect-timeout", "2s", "health-timeout", "2s"));
        settings.putAll(overrides);
        return new LlamaCppBackend(new BackendConfig("wm", "llamacpp", settings));
    }

    private static ChatCompletionRequest hello() {
        return ChatCompletionRequest.of("tiny", List.of(ChatMessage.user("hello")));
    }

    static String chunk(String content, String finishReason) {
        return "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"tiny\","
                + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + content + "\"},\"finish_reason\":"
                + (finishReason == null ? "null" : "\"" + finishReason + "\"") + "}]}\n\n";
    }

    static final String USAGE_CHUNK = "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,"
            + "\"model\":\"tiny\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2,\"total_tokens\":7},"
            + "\"timings\":{\"prompt_n\":5,\"predicted_n\":2,\"predicted_per_second\":41.5}}\n\n";

    static final String GOOD_STREAM = chunk("Hel", null) + ": keep-alive\n\n" + chunk("lo", "stop") + USAGE_CHUNK + "data: [DONE]\n\n";

    private static void stubChat(com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder response) {
        wm.stubFor(post(urlEqualTo(CHAT)).willReturn(response));
    }

    private static com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder sse(String body) {
        return aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream").withBody(body);
    }

    private static BackendException failure(Flux<?> flux) {
        List<Object> received = new CopyOnWriteArrayList<>();
        Throwable error = null;
        try {
            flux.doOnNext(received::add).blockLast(WAIT);
        } catch (RuntimeException e) {
            error = e;
        }
        assertThat(error).as("the stream must fail, it received %s", received).isInstanceOf(BackendException.class);
        return (BackendException) error;
    }

    @Test
    void streamsChunksWithUsageAndKeepsTimings() {
        stubChat(sse(GOOD_STREAM));
        List<ChatCompletionChunk> chunks = backend.chat(hello()).collectList().block(WAIT);
        assertThat(chunks).hasSize(3);
        assertThat(chunks.get(0).contentDelta() + chunks.get(1).contentDelta()).isEqualTo("Hello");
        ChatCompletionChunk last = chunks.get(2);
        assertThat(last.choices()).isEmpty();
        assertThat(last.usage().completionTokens()).isEqualTo(2);
        assertThat(last.extra()).containsKey("timings");
        assertThat(JSON.valueToTree(last.extra().get("timings")).get("predicted_per_second").asDouble()).isEqualTo(41.5);
    }

    @Test
    void aWholeAnswerComesAsTheServerSentItOnAKeptConnection() {
        String answer = "{\"id\":\"chatcmpl-9\",\"object\":\"chat.completion\",\"created\":5,\"model\":\"tiny\","
                + "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Hello\"},"
                + "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2,"
                + "\"total_tokens\":7},\"timings\":{\"predicted_ms\":12.5}}";
        stubChat(aResponse().withStatus(200).withHeader("Content-Type", "application/json").withBody(answer));

        WholeAnswer whole = backend.chatWhole(hello()).block(WAIT);

        assertThat(new String(whole.json().bytes(), java.nio.charset.StandardCharsets.UTF_8)).isEqualTo(answer);
        assertThat(whole.usage().completionTokens()).isEqualTo(2);
        assertThat(whole.generationNanos()).isEqualTo(12_500_000L);
        JsonNode sent = sentChat();
        assertThat(sent.path("stream").asBoolean(false)).isFalse();
        assertThat(sent.has("timings_per_token")).isFalse();
        wm.verify(postRequestedFor(urlEqualTo(CHAT)).withHeader("Accept", equalTo("application/json"))
                .withoutHeader("Connection"));
    }

    @Test
    void aWholeAnswerFromAnUpstreamThatStreamsAnywayIsPutTogether() {
        stubChat(sse(GOOD_STREAM));

        WholeAnswer whole = backend.chatWhole(hello()).block(WAIT);

        JsonNode answer = JSON.readTree(whole.json().bytes());
        assertThat(answer.at("/choices/0/message/content").asString()).isEqualTo("Hello");
        assertThat(answer.get("object").asString()).isEqualTo("chat.completion");
        assertThat(whole.usage().totalTokens()).isEqualTo(7);
    }

    @Test
    void aWholeAnswersHttpErrorIsTyped() {
        stubChat(aResponse().withStatus(429).withHeader("Retry-After", "3")
                .withBody("{\"error\":{\"code\":429,\"message\":\"busy\"}}"));
        BackendException e = failure(backend.chatWhole(hello()).flux());
        assertThat(e.kind()).isEqualTo(BackendErrorKind.OVERLOADED);
    }

    private static String timedChunk(String content, int predicted) {
        return chunk(content, null).replace("}]}\n\n", "}],\"timings\":{\"cache_n\":4,\"prompt_n\":1,\"predicted_n\":"
                + predicted + "}}\n\n");
    }

    private static JsonNode sentChat() {
        return JSON.readTree(wm.getAllServeEvents().stream()
                .filter(e -> e.getRequest().getUrl().equals(CHAT)).findFirst().orElseThrow()
                .getRequest().getBodyAsString());
    }

    /** Issue 14, finding 3: the prompt's exact size from the first token, for a resume that needs it. */
    @Test
    void asksForPerTokenTimingsAndKeepsThemOnlyOnTheFirstTokenAndTheUsageChunk() {
        stubChat(sse(timedChunk("a", 1) + timedChunk("b", 2) + timedChunk("c", 3) + USAGE_CHUNK + "data: [DONE]\n\n"));
        List<ChatCompletionChunk> chunks = backend.chat(hello()).collectList().block(WAIT);
        assertThat(sentChat().get("timings_per_token").asBoolean()).isTrue();
        assertThat(chunks).extracting(c -> c.extra().containsKey("timings")).containsExactly(true, false, false, true);
        assertThat(JSON.valueToTree(chunks.getFirst().extra().get("timings")).get("cache_n").asInt()).isEqualTo(4);
    }

    /** Issue 13: a request carrying the client's body is sent as those bytes, with what the backend adds appended. */
    @Test
    void aClientsBodyIsSentOnWithTheStreamFieldsAndTimingsAppended() {
        stubChat(sse(GOOD_STREAM));
        String body = "{ \"model\":\"tiny\", \"messages\":[{\"role\":\"user\",\"content\":\"hi\"}], \"top_k\":7 }";
        ChatCompletionRequest bound = ChatCompletionRequest.builder().model("tiny")
                .messages(List.of(ChatMessage.user("hi"))).extra("top_k", 7).build();
        ChatCompletionRequest request = bound.withRaw(dev.lazarus.backend.api.openai.RawRequest.of(
                body.getBytes(java.nio.charset.StandardCharsets.UTF_8), body.indexOf("\"tiny\""),
                body.indexOf("\"tiny\"") + 6, body.lastIndexOf('}'), bound.extra()));

        backend.chat(request).collectList().block(WAIT);

        String sent = wm.getAllServeEvents().stream().filter(e -> e.getRequest().getUrl().equals(CHAT)).findFirst()
                .orElseThrow().getRequest().getBodyAsString();
        assertThat(sent).isEqualTo(body.substring(0, body.lastIndexOf('}')) + ",\"stream\":true,"
                + "\"stream_options\":{\"include_usage\":true},\"timings_per_token\":true,\"return_progress\":true}");
    }

    @Test
    void aClientsOwnChoiceOfPerTokenTimingsIsLeftAsItIs() {
        stubChat(sse(timedChunk("a", 1) + timedChunk("b", 2) + USAGE_CHUNK + "data: [DONE]\n\n"));
        ChatCompletionRequest request = ChatCompletionRequest.builder().model("tiny")
                .messages(List.of(ChatMessage.user("hi"))).extra("timings_per_token", true).build();
        List<ChatCompletionChunk> chunks = backend.chat(request).collectList().block(WAIT);
        assertThat(sentChat().get("timings_per_token").asBoolean()).isTrue();
        assertThat(chunks).extracting(c -> c.extra().containsKey("timings")).containsExactly(true, true, true);
    }

    @Test
    void aCallMadeOnAnEventLoopIsServedOnThatLoop() {
        stubChat(sse(GOOD_STREAM));
        MultiThreadIoEventLoopGroup loops = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
        try {
            for (EventLoop loop : List.of((EventLoop) loops.next(), (EventLoop) loops.next(), (EventLoop) loops.next())) {
                List<Boolean> onLoop = new CopyOnWriteArrayList<>();
                List<ChatCompletionChunk> chunks = backend.chat(hello())
                        .doOnNext(c -> onLoop.add(loop.inEventLoop()))
                        .subscribeOn(Schedulers.fromExecutor(loop))
                        .collectList().block(WAIT);
                assertThat(chunks).extracting(ChatCompletionChunk::contentDelta).containsExactly("Hel", "lo", "");
                assertThat(onLoop).containsOnly(true);
            }
        } finally {
            loops.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    @Test
    void chunksSplitAcrossManySmallFramesArriveWhole() {
        stubChat(sse(GOOD_STREAM).withChunkedDribbleDelay(40, 200));
        List<ChatCompletionChunk> chunks = backend.chat(hello()).collectList().block(WAIT);
        assertThat(chunks).extracting(ChatCompletionChunk::contentDelta).containsExactly("Hel", "lo", "");
    }

    @Test
    void extrasReachTheUpstreamBodyVerbatimAndStreamingIsForced() {
        stubChat(sse(GOOD_STREAM));
        ChatCompletionRequest request = ChatCompletionRequest.builder().model("tiny").messages(List.of(ChatMessage.user("hi")))
                .temperature(0.0).maxTokens(8)
                .extra("top_k", 40).extra("min_p", 0.05).extra("cache_prompt", true)
                .extra("grammar", "root ::= \"yes\" | \"no\"")
                .extra("json_schema", Map.of("type", "object", "properties", Map.of("a", Map.of("type", "string"))))
                .build();
        backend.chat(request).blockLast(WAIT);

        // The backend may also have asked /props or /v1/models meanwhile: pick the completion call.
        JsonNode sent = JSON.readTree(wm.getAllServeEvents().stream()
                .filter(e -> e.getRequest().getUrl().equals(CHAT)).findFirst().orElseThrow()
                .getRequest().getBodyAsString());
        assertThat(sent.get("top_k").asInt()).isEqualTo(40);
        assertThat(sent.get("min_p").asDouble()).isEqualTo(0.05);
        assertThat(sent.get("cache_prompt").asBoolean()).isTrue();
        assertThat(sent.get("grammar").asString()).isEqualTo("root ::= \"yes\" | \"no\"");
        assertThat(sent.get("json_schema")).isEqualTo(JSON.readTree("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}}}"));
        assertThat(sent.get("stream").asBoolean()).isTrue();
        assertThat(sent.at("/stream_options/include_usage").asBoolean()).isTrue();
        assertThat(sent.get("max_tokens").asInt()).isEqualTo(8);
        assertThat(sent.at("/messages/0/content").asString()).isEqualTo("hi");
        assertThat(sent.has("extra")).isFalse();
        wm.verify(postRequestedFor(urlEqualTo(CHAT)).withHeader("Accept", equalTo("text/event-stream")));
    }

    @Test
    void theApiKeyIsSentAsBearer() {
        backend.close();
        backend = backend(Map.of("api-key", "sk-test-key"));
        stubChat(sse(GOOD_STREAM));
        backend.chat(hello()).blockLast(WAIT);
        wm.verify(postRequestedFor(urlEqualTo(CHAT)).withHeader("Authorization", equalTo("Bearer sk-test-key")));
    }

    @Test
    void legacyCompletionsStream() {
        wm.stubFor(post(urlEqualTo("/v1/completions")).willReturn(sse(
                "data: {\"id\":\"c1\",\"object\":\"text_completion\",\"created\":1,\"model\":\"tiny\",\"choices\":[{\"index\":0,\"text\":\"abc\",\"finish_reason\":null}]}\n\n"
                        + "data: {\"id\":\"c1\",\"object\":\"text_completion\",\"created\":1,\"model\":\"tiny\",\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1,\"total_tokens\":2}}\n\n"
                        + "data: [DONE]\n\n")));
        List<Completion> chunks = backend.completion(CompletionRequest.of("tiny", "x", 4)).collectList().block(WAIT);
        assertThat(chunks).hasSize(2);
        assertThat(chunks.getFirst().choices().getFirst().text()).isEqualTo("abc");
        assertThat(chunks.getLast().usage().totalTokens()).isEqualTo(2);
    }

    /**
     * Issue 13: a legacy completion carrying the client's body is sent as those bytes: the model written
     * over, the stream fields and timings appended; non-streaming, as they came but for the model.
     */
    @Test
    void aClientsCompletionBodyIsSentOnWithTheModelWrittenOverAndTheStreamFieldsAppended() {
        wm.stubFor(post(urlEqualTo("/v1/completions")).willReturn(sse(
                "data: {\"id\":\"c1\",\"object\":\"text_completion\",\"created\":1,\"model\":\"tiny\",\"choices\":[],"
                        + "\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1,\"total_tokens\":2}}\n\n"
                        + "data: [DONE]\n\n")));
        String body = "{\"prompt\" : [\"a\\u00e9\"], \"model\":\"public\",\n \"top_k\":7, \"temperature\":0.50, \"max_tokens\":4 }";
        CompletionRequest bound = new CompletionRequest("public", List.of("a\u00e9"), null, 4, 0.5, null, null, null,
                null, null, null, null, null, null, null, null, null, null, new HashMap<>(Map.of("top_k", 7)));
        CompletionRequest request = bound.withRaw(dev.lazarus.backend.api.openai.RawRequest.of(
                body.getBytes(java.nio.charset.StandardCharsets.UTF_8), body.indexOf("\"public\""),
                body.indexOf("\"public\"") + 8, body.lastIndexOf('}'), bound.extra()));

        backend.completion(request.withModel("tiny")).collectList().block(WAIT);

        String tail = body.substring(body.indexOf("\"public\"") + 8, body.lastIndexOf('}'));
        String head = body.substring(0, body.indexOf("\"public\""));
        assertThat(completionBodySent()).isEqualTo(head + "\"tiny\"" + tail
                + ",\"stream\":true,\"stream_options\":{\"include_usage\":true},\"timings_per_token\":true,"
                + "\"return_progress\":true}");

        wm.resetAll();
        wm.stubFor(post(urlEqualTo("/v1/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "application/json").withBody("{\"id\":\"c1\",\"object\":\"text_completion\","
                        + "\"created\":1,\"model\":\"tiny\",\"choices\":[{\"index\":0,\"text\":\"abc\",\"finish_reason\":\"stop\"}]}")));

        backend.completionWhole(request.withModel("tiny")).block(WAIT);

        assertThat(completionBodySent())
                .isEqualTo(head + "\"tiny\"" + tail + "}");
    }

    /** The body of the completion call (the newest event may be a health probe's GET, which has none). */
    private String completionBodySent() {
        return wm.getAllServeEvents().stream().filter(e -> e.getRequest().getUrl().equals("/v1/completions"))
                .findFirst().orElseThrow().getRequest().getBodyAsString();
    }

    @Test
    void aBurstOf500sFailsEachCallAndTheNextCallSucceeds() {
        for (int i = 0; i < 3; i++) {
            wm.stubFor(post(urlEqualTo(CHAT)).inScenario("burst")
                    .whenScenarioStateIs(i == 0 ? Scenario.STARTED : "after-" + i)
                    .willSetStateTo("after-" + (i + 1))
                    .willReturn(aResponse().withStatus(500)
                            .withBody("{\"error\":{\"code\":500,\"message\":\"ggml_cuda error " + i + "\",\"type\":\"server_error\"}}")));
        }
        wm.stubFor(post(urlEqualTo(CHAT)).inScenario("burst").whenScenarioStateIs("after-3").willReturn(sse(GOOD_STREAM)));
        for (int i = 0; i < 3; i++) {
            BackendException e = failure(backend.chat(hello()));
            assertThat(e.kind()).isEqualTo(BackendErrorKind.UPSTREAM);
            assertThat(e.getMessage()).contains("500").contains("ggml_cuda error " + i);
        }
        assertThat(backend.chat(hello()).collectList().block(WAIT)).hasSize(3);
    }

    @Test
    void tooManyRequestsCarriesRetryAfter() {
        stubChat(aResponse().withStatus(429).withHeader("Retry-After", "12")
                .withBody("{\"error\":{\"code\":429,\"message\":\"busy\",\"type\":\"rate_limit_error\"}}"));
        BackendException e = failure(backend.chat(hello()));
        assertThat(e.kind()).isEqualTo(BackendErrorKind.OVERLOADED);
        assertThat(e.retryAfter()).isEqualTo(Duration.ofSeconds(12));
    }

    @Test
    void contextOverflowIsTyped() {
        stubChat(aResponse().withStatus(400).withBody("""
                {"error":{"code":400,"message":"request (9000 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":4096}}"""));
        BackendException e = failure(backend.chat(hello()));
        assertThat(e.kind()).isEqualTo(BackendErrorKind.CONTEXT_LENGTH_EXCEEDED);
        assertThat(e.getMessage()).contains("9000 tokens");
    }

    @Test
    void otherHttpErrors() {
        stubChat(aResponse().withStatus(400).withBody("{\"error\":{\"code\":400,\"message\":\"bad grammar\",\"type\":\"invalid_request_error\"}}"));
        assertThat(failure(backend.chat(hello()))).satisfies(e -> assertThat(e.kind()).isEqualTo(BackendErrorKind.INVALID_REQUEST))
                .hasMessage("bad grammar");
        stubChat(aResponse().withStatus(404).withBody("{\"error\":{\"code\":404,\"message\":\"File Not Found\",\"type\":\"not_found_error\"}}"));
        assertThat(failure(backend.chat(hello())).kind()).isEqualTo(BackendErrorKind.MODEL_NOT_FOUND);
        stubChat(aResponse().withStatus(503).withBody("{\"error\":{\"code\":503,\"message\":\"Loading model\",\"type\":\"unavailable_error\"}}"));
        assertThat(failure(backend.chat(hello())).kind()).isEqualTo(BackendErrorKind.UNAVAILABLE);
    }

    @Test
    void errorObjectsInsideTheStream() {
        stubChat(sse(chunk("a", null) + "data: {\"error\":{\"code\":500,\"message\":\"Context size has been exceeded.\",\"type\":\"server_error\"}}\n\n"));
        List<ChatCompletionChunk> got = new CopyOnWriteArrayList<>();
        BackendException e = failure(backend.chat(hello()).doOnNext(got::add));
        assertThat(got).hasSize(1);
        assertThat(e.kind()).isEqualTo(BackendErrorKind.CONTEXT_LENGTH_EXCEEDED);

        stubChat(sse(chunk("a", null) + "error: {\"code\":500,\"message\":\"slot crashed\",\"type\":\"server_error\"}\n\n"));
        BackendException old = failure(backend.chat(hello()));
        assertThat(old.kind()).isEqualTo(BackendErrorKind.UPSTREAM);
        assertThat(old.getMessage()).contains("slot crashed");
    }

    @Test
    void malformedStreams() {
        stubChat(sse(chunk("a", null) + "data: {\"id\": not json\n\n"));
        assertThat(failure(backend.chat(hello())).kind()).isEqualTo(BackendErrorKind.UPSTREAM);

        stubChat(sse(chunk("a", null)));
        assertThat(failure(backend.chat(hello()))).satisfies(e -> assertThat(e.kind()).isEqualTo(BackendErrorKind.UPSTREAM))
                .hasMessageContaining("[DONE]");

        stubChat(sse(chunk("a", null) + "data: {\"cut\":"));
        assertThat(failure(backend.chat(hello())).kind()).isEqualTo(BackendErrorKind.UPSTREAM);
    }

    @Test
    void connectionFaults() {
        stubChat(aResponse().withFault(Fault.CONNECTION_RESET_BY_PEER));
        assertThat(failure(backend.chat(hello())).kind()).isEqualTo(BackendErrorKind.UPSTREAM);
        stubChat(aResponse().withFault(Fault.MALFORMED_RESPONSE_CHUNK));
        assertThat(failure(backend.chat(hello())).kind()).isEqualTo(BackendErrorKind.UPSTREAM);
        stubChat(aResponse().withFault(Fault.EMPTY_RESPONSE));
        assertThat(failure(backend.chat(hello())).kind()).isEqualTo(BackendErrorKind.UPSTREAM);
    }

    @Test
    void noFirstTokenInTimeIsATimeout() {
        backend.close();
        backend = backend(Map.of("first-token-timeout", "300ms"));
        stubChat(sse(GOOD_STREAM).withFixedDelay(3000));
        BackendException e = failure(backend.chat(hello()));
        assertThat(e.kind()).isEqualTo(BackendErrorKind.TIMEOUT);
        assertThat(e.getMessage()).contains("first token");
    }

    @Test
    void aStallBetweenChunksIsATimeout() {
        backend.close();
        backend = backend(Map.of("idle-timeout", "300ms"));
        // Two frames a few seconds apart; the first holds exactly one whole event.
        String first = chunk("a", null);
        String padding = ":" + "x".repeat(first.length() - 3) + "\n\n";
        stubChat(sse(first + padding).withChunkedDribbleDelay(2, 4000));
        List<ChatCompletionChunk> got = new CopyOnWriteArrayList<>();
        BackendException e = failure(backend.chat(hello()).doOnNext(got::add));
        assertThat(e.kind()).isEqualTo(BackendErrorKind.TIMEOUT);
        assertThat(e.getMessage()).contains("stalled");
        assertThat(got).hasSize(1);
    }

    @Test
    void connectionRefusedIsUnavailable() {
        int closedPort = wm.port();
        backend.close();
        WireMockServer probe = new WireMockServer(options().bindAddress("127.0.0.1").dynamicPort());
        probe.start();
        int freePort = probe.port();
        probe.stop();
        assertThat(freePort).isNotEqualTo(closedPort);
        backend = backend(Map.of("url", "http://127.0.0.1:" + freePort));
        assertThat(failure(backend.chat(hello())).kind()).isEqualTo(BackendErrorKind.UNAVAILABLE);
        BackendHealth health = backend.health().block(WAIT);
        assertThat(health.status()).isEqualTo(BackendHealth.Status.DOWN);
    }

    @Test
    void healthLoadingThenUpWithSlots() {
        wm.stubFor(get(urlEqualTo("/health")).willReturn(aResponse().withStatus(503)
                .withBody("{\"error\":{\"code\":503,\"message\":\"Loading model\",\"type\":\"unavailable_error\"}}")));
        BackendHealth loading = backend.health().block(WAIT);
        assertThat(loading.status()).isEqualTo(BackendHealth.Status.LOADING);
        assertThat(loading.detail()).contains("Loading model");

        wm.stubFor(get(urlEqualTo("/health")).willReturn(aResponse().withStatus(200).withBody("{\"status\":\"ok\"}")));
        wm.stubFor(get(urlEqualTo("/slots")).willReturn(aResponse().withStatus(200)
                .withBody("[{\"id\":0,\"is_processing\":true},{\"id\":1,\"is_processing\":false}]")));
        BackendHealth up = backend.health().block(WAIT);
        assertThat(up.status()).isEqualTo(BackendHealth.Status.UP);
        assertThat(up.details()).containsEntry("slots_total", 2).containsEntry("slots_busy", 1);

        wm.stubFor(get(urlEqualTo("/health")).willReturn(aResponse().withStatus(500)));
        assertThat(backend.health().block(WAIT).status()).isEqualTo(BackendHealth.Status.DOWN);
    }

    @Test
    void healthIsUpWhileEveryCompletionConnectionIsBusy() {
        backend.close();
        backend = backend(Map.of("max-connections", 1));
        stubChat(sse(GOOD_STREAM).withFixedDelay(2000));
        wm.stubFor(get(urlEqualTo("/health")).willReturn(aResponse().withStatus(200).withBody("{\"status\":\"ok\"}")));
        java.util.concurrent.atomic.AtomicBoolean finished = new java.util.concurrent.atomic.AtomicBoolean();
        var inFlight = backend.chat(hello()).doFinally(signal -> finished.set(true)).subscribe(c -> {}, e -> {});
        try {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (wm.getAllServeEvents().stream().noneMatch(e -> e.getRequest().getUrl().equals(CHAT))
                    && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertThat(backend.health().block(WAIT).status()).isEqualTo(BackendHealth.Status.UP);
            assertThat(finished).as("the completion still holds the only stream connection").isFalse();
        } finally {
            inFlight.dispose();
        }
    }

    @Test
    void describeLearnsTheModelAndContextFromTheServer() throws InterruptedException {
        backend.close();
        wm.stubFor(get(urlEqualTo("/props")).willReturn(aResponse().withStatus(200).withBody("""
                {"default_generation_settings":{"n_ctx":4096},"total_slots":2,"model_path":"/models/tiny.gguf",
                 "chat_template":"{{ messages }}","build_info":"b6000-abc"}""")));
        wm.stubFor(get(urlEqualTo("/v1/models")).willReturn(aResponse().withStatus(200)
                .withBody("{\"object\":\"list\",\"data\":[{\"id\":\"/models/tiny.gguf\",\"object\":\"model\",\"owned_by\":\"llamacpp\","
                        + "\"meta\":{\"vocab_type\":2,\"n_vocab\":260,\"n_ctx_train\":8192,\"n_embd\":64,"
                        + "\"n_params\":1234567,\"size\":2469134,\"path\":\"/models/tiny.gguf\"}}]}")));
        backend = backend(Map.of("model-name", ""));
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (backend.serverInfo().isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        var model = backend.describe().models().getFirst();
        assertThat(model.id()).isEqualTo("tiny.gguf");
        assertThat(model.contextLength()).isEqualTo(4096);
        assertThat(model.metadata()).containsEntry("total_slots", 2).containsEntry("chat_template", true)
                .containsEntry("parameters", 1234567L).containsEntry("vocab_size", 260L).containsEntry("vocab_type", 2L)
                .containsEntry("trained_context_length", 8192L).containsEntry("embedding_length", 64L)
                .containsEntry("size_bytes", 2469134L).containsEntry("llama_cpp_build", "b6000-abc");
        assertThat(model.metadata().values()).as("no path on the server is shown to API clients")
                .noneMatch(value -> String.valueOf(value).contains("/models/"));
    }

    /**
     * Issue 17 (1, 3): an upstream that echoes its key in its {@code /health} message, in
     * {@code build_info} and in its model id; none of it leaves the backend in clear.
     */
    @Test
    void healthAndServerFactsAreRedacted() throws InterruptedException {
        backend.close();
        String key = "sk-upstream-SECRET789";
        wm.stubFor(get(urlEqualTo("/health")).willReturn(aResponse().withStatus(503).withBody(
                "{\"error\":{\"code\":503,\"message\":\"Loading model (got header Bearer " + key + ") key=" + key
                        + "\",\"type\":\"unavailable_error\"}}")));
        wm.stubFor(get(urlEqualTo("/props")).willReturn(aResponse().withStatus(200).withBody(
                "{\"default_generation_settings\":{\"n_ctx\":4096},\"build_info\":\"b1 Authorization: Bearer " + key + "\"}")));
        wm.stubFor(get(urlEqualTo("/v1/models")).willReturn(aResponse().withStatus(200)
                .withBody("{\"object\":\"list\",\"data\":[{\"id\":\"" + key + "\",\"object\":\"model\"}]}")));
        backend = backend(Map.of("model-name", "", "api-key", key));
        BackendHealth loading = backend.health().block(WAIT);
        assertThat(loading.status()).isEqualTo(BackendHealth.Status.LOADING);
        assertThat(loading.detail()).contains("Loading model").doesNotContain("SECRET").doesNotContain("sk-upstream");
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (backend.serverInfo().isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        var model = backend.describe().models().getFirst();
        assertThat(model.id() + model.metadata()).doesNotContain("SECRET").contains("b1 Authorization: ***");
    }
}
