package dev.lazarus.gateway.realserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.testsupport.LlamaServerProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The gateway in front of real llama-servers: chat (stream and not), completions, models, llama.cpp
 * extras passed through, context overflow, a refused backend, and a llama-server killed with SIGKILL.
 */
@Tag("llama-server")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient(timeout = "PT2M")
class RealLlamaServerGatewayTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    static LlamaServerProcess steady;
    static LlamaServerProcess victim;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        steady = RealLlamaServers.start();
        victim = RealLlamaServers.start();
        RealLlamaServers.backend(registry, 0, "steady", steady.url().toString());
        RealLlamaServers.backend(registry, 1, "victim", victim.url().toString());
        RealLlamaServers.backend(registry, 2, "refused", "http://127.0.0.1:" + RealLlamaServers.closedPort());
        RealLlamaServers.route(registry, 0, "tiny", "steady");
        RealLlamaServers.route(registry, 1, "tiny-failover", "refused", "steady");
        RealLlamaServers.route(registry, 2, "tiny-refused", "refused");
        RealLlamaServers.route(registry, 3, "tiny-victim", "victim");
        RealLlamaServers.route(registry, 4, "tiny-victim-then-steady", "victim", "steady");
        registry.add("lazarus.routing.retry-after", () -> "3s");
    }

    @AfterAll
    static void stopServers() {
        RealLlamaServers.stopAll();
    }

    @Autowired
    WebTestClient client;

    private WebTestClient.ResponseSpec post(String path, String body) {
        return client.post().uri(path).contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange();
    }

    private static String chat(String model, String extra) {
        return """
                {"model":"%s","messages":[{"role":"user","content":"Tell me about the sea."}],
                 "max_tokens":12,"temperature":0%s}""".formatted(model, extra);
    }

    private JsonNode okJson(String path, String body) {
        byte[] bytes = post(path, body).expectStatus().isOk().expectBody().returnResult().getResponseBody();
        return JSON.readTree(bytes);
    }

    @Test
    void modelsListsEveryRoute() {
        JsonNode models = JSON.readTree(client.get().uri("/v1/models").exchange().expectStatus().isOk()
                .expectBody().returnResult().getResponseBody());
        List<String> ids = new ArrayList<>();
        models.get("data").forEach(m -> ids.add(m.get("id").asString()));
        assertThat(ids).contains("tiny", "tiny-failover", "tiny-refused");
    }

    /** llama-server's /props names the model file; /v1/models shows the model's figures, never that path. */
    @Test
    void modelsShowTheModelsFiguresButNoServerPath() throws InterruptedException {
        JsonNode meta = null;
        String body = "";
        long deadline = System.nanoTime() + java.time.Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) { // the backend learns /props and /v1/models in the background
            body = new String(client.get().uri("/v1/models/tiny").exchange().expectStatus().isOk()
                    .expectBody().returnResult().getResponseBody(), java.nio.charset.StandardCharsets.UTF_8);
            meta = JSON.readTree(body).path("meta");
            if (meta.has("parameters")) {
                break;
            }
            Thread.sleep(100);
        }
        assertThat(meta.path("parameters").asLong()).isPositive();
        assertThat(meta.path("vocab_size").asLong()).isPositive();
        assertThat(meta.path("context_length").asInt()).isPositive();
        assertThat(meta.has("model_path")).isFalse();
        assertThat(body).doesNotContain(".gguf").doesNotContain("/tmp");
    }

    @Test
    void nonStreamingChatIsAnsweredByLlamaServer() {
        JsonNode answer = okJson("/v1/chat/completions", chat("tiny", ""));
        assertThat(answer.get("object").asString()).isEqualTo("chat.completion");
        assertThat(answer.get("model").asString()).as("the model llama-server serves").isEqualTo("tiny-llama.gguf");
        assertThat(answer.at("/choices/0/message/role").asString()).isEqualTo("assistant");
        assertThat(answer.at("/choices/0/finish_reason").asString()).isEqualTo("length");
        assertThat(answer.at("/usage/completion_tokens").asInt()).isEqualTo(12);
        assertThat(answer.at("/usage/prompt_tokens").asInt()).isPositive();
        // llama-server's answer passed through whole: its own fields kept, the identity the gateway's
        assertThat(answer.at("/timings/predicted_n").asInt()).isEqualTo(12);
        assertThat(answer.get("system_fingerprint").asString()).isNotEmpty();
        assertThat(answer.get("id").asString()).startsWith("chatcmpl-");
    }

    @Test
    void streamingChatIsOneWellFormedStream() {
        String body = post("/v1/chat/completions",
                chat("tiny", ",\"stream\":true,\"stream_options\":{\"include_usage\":true}"))
                .expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith(MediaType.TEXT_EVENT_STREAM)
                .expectBody(String.class).returnResult().getResponseBody();
        List<String> events = SseEvents.parse(body);
        assertThat(events.getLast()).isEqualTo("[DONE]");
        assertThat(events.stream().filter("[DONE]"::equals)).hasSize(1);
        List<JsonNode> chunks = events.subList(0, events.size() - 1).stream().map(JSON::readTree).toList();
        Set<String> ids = new HashSet<>();
        chunks.forEach(c -> ids.add(c.get("id").asString()));
        assertThat(ids).hasSize(1);
        assertThat(ids.iterator().next()).startsWith("chatcmpl-");
        JsonNode usage = chunks.getLast();
        assertThat(usage.get("choices")).isEmpty();
        assertThat(usage.at("/usage/completion_tokens").asInt()).isEqualTo(12);
        assertThat(chunks.subList(0, chunks.size() - 1)).allSatisfy(c -> assertThat(c.has("usage") && !c.get("usage").isNull()).isFalse());
        assertThat(chunks.stream().filter(c -> c.at("/choices/0/finish_reason").isString()).count()).isEqualTo(1);
    }

    @Test
    void llamaCppExtrasReachTheServer() {
        // A grammar only llama-server understands: the answer can only be "yes" if it was passed through.
        JsonNode answer = okJson("/v1/chat/completions",
                chat("tiny", ",\"grammar\":\"root ::= \\\"yes\\\"\",\"top_k\":1,\"cache_prompt\":false"));
        assertThat(answer.at("/choices/0/message/content").asString()).isEqualTo("yes");
        assertThat(answer.at("/choices/0/finish_reason").asString()).isEqualTo("stop");
    }

    @Test
    void legacyCompletionsWork() {
        JsonNode answer = okJson("/v1/completions",
                "{\"model\":\"tiny\",\"prompt\":\"Once upon a time\",\"max_tokens\":8,\"temperature\":0}");
        assertThat(answer.get("object").asString()).isEqualTo("text_completion");
        assertThat(answer.get("id").asString()).startsWith("cmpl-");
        assertThat(answer.at("/choices/0/text").isString()).isTrue();
        assertThat(answer.at("/usage/completion_tokens").asInt()).isEqualTo(8);
    }

    @Test
    void contextOverflowIsA400WithItsCode() {
        String longText = "the sea is wide and deep and blue ".repeat(200);
        byte[] body = post("/v1/chat/completions", """
                {"model":"tiny","messages":[{"role":"user","content":"%s"}],"max_tokens":4}""".formatted(longText))
                .expectStatus().isBadRequest().expectBody().returnResult().getResponseBody();
        JsonNode error = JSON.readTree(body).get("error");
        assertThat(error.get("code").asString()).isEqualTo("context_length_exceeded");
        // llama-server's type and sizes, as a kt-native route answers (ContextErrorShapeTest)
        assertThat(error.get("type").asString()).isEqualTo("exceed_context_size_error");
        assertThat(error.get("n_prompt_tokens").asInt()).isGreaterThan(error.get("n_ctx").asInt());
        assertThat(error.get("message").asString()).isNotBlank();
    }

    @Test
    void refusedBackendFailsOverToTheNext() {
        JsonNode answer = okJson("/v1/chat/completions", chat("tiny-failover", ""));
        assertThat(answer.at("/usage/completion_tokens").asInt()).isEqualTo(12);
    }

    @Test
    void refusedOnlyBackendIsAClean503() {
        byte[] body = post("/v1/chat/completions", chat("tiny-refused", ""))
                .expectStatus().isEqualTo(503)
                .expectHeader().exists("Retry-After")
                .expectBody().returnResult().getResponseBody();
        JsonNode error = JSON.readTree(body).get("error");
        assertThat(error.get("type").asString()).isEqualTo("server_error");
        assertThat(error.get("message").asString()).contains("tiny-refused");
    }

    @Test
    void killedServerMovesTrafficToTheNextBackend() throws Exception {
        okJson("/v1/chat/completions", chat("tiny-victim", ""));
        victim.kill();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (victim.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(victim.isAlive()).as("llama-server still alive after SIGKILL").isFalse();

        post("/v1/chat/completions", chat("tiny-victim", "")).expectStatus().isEqualTo(503);
        JsonNode answer = okJson("/v1/chat/completions", chat("tiny-victim-then-steady", ""));
        assertThat(answer.at("/usage/completion_tokens").asInt()).isEqualTo(12);
        String stream = post("/v1/chat/completions", chat("tiny-victim-then-steady", ",\"stream\":true"))
                .expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
        assertThat(SseEvents.parse(stream).getLast()).isEqualTo("[DONE]");
    }
}
