package dev.lazarus.llamacpp;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.tomakehurst.wiremock.WireMockServer;
import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendConfigException;
import dev.lazarus.backend.api.BackendFactories;
import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.backend.api.InferenceBackend;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 14, the generic {@code openai} kind: a vLLM-like server (no {@code /health}, {@code /props}
 * or {@code /slots}) found through the SPI by its kind, healthy by {@code /v1/models}, called with
 * its key, and not asked to continue answers unless configured.
 */
class OpenAiBackendKindTest {

    private static WireMockServer wm;

    @BeforeAll
    static void start() {
        wm = new WireMockServer(options().bindAddress("127.0.0.1").dynamicPort());
        wm.start();
    }

    @AfterAll
    static void stop() {
        wm.stop();
    }

    @BeforeEach
    void reset() {
        wm.resetAll();
        wm.stubFor(get(urlEqualTo("/v1/models")).willReturn(okJson("""
                {"object":"list","data":[{"id":"Qwen/Qwen3-30B-A3B","object":"model","created":1,"owned_by":"vllm","max_model_len":32768}]}""")));
    }

    private static InferenceBackend openAi(Map<String, Object> extra) {
        Map<String, Object> settings = new HashMap<>(Map.of("url", wm.baseUrl(), "api-key", "sk-vllm-key",
                "health-timeout", "2s", "first-token-timeout", "5s"));
        settings.putAll(extra);
        return BackendFactories.load(OpenAiBackendKindTest.class.getClassLoader())
                .create(new BackendConfig("vllm", "openai", settings));
    }

    @Test
    void registeredThroughTheSpiAndHealthyByItsModelList() {
        try (InferenceBackend backend = openAi(Map.of())) {
            BackendHealth health = backend.health().block(Duration.ofSeconds(5));
            assertThat(health.status()).isEqualTo(BackendHealth.Status.UP);
            wm.verify(getRequestedFor(urlEqualTo("/v1/models")).withHeader("Authorization", equalTo("Bearer sk-vllm-key")));
            assertThat(wm.findAll(getRequestedFor(urlEqualTo("/health")))).isEmpty();
            assertThat(wm.findAll(getRequestedFor(urlEqualTo("/props")))).isEmpty();
            assertThat(wm.findAll(getRequestedFor(urlEqualTo("/slots")))).isEmpty();
            assertThat(backend.describe().kind()).isEqualTo("openai");
            assertThat(backend.describe().capabilities().assistantPrefill())
                    .as("vLLM answers a trailing assistant message anew: no continuation by default").isFalse();
            await(() -> assertThat(backend.describe().models().getFirst().id()).isEqualTo("Qwen/Qwen3-30B-A3B"));
            assertThat(backend.describe().models().getFirst().contextLength()).isEqualTo(32768);
        }
    }

    @Test
    void aConfiguredHealthPath() {
        wm.stubFor(get(urlEqualTo("/health")).willReturn(aResponse().withStatus(503)));
        try (InferenceBackend backend = openAi(Map.of("health-path", "/health"))) {
            assertThat(backend.health().block(Duration.ofSeconds(5)).status()).isNotEqualTo(BackendHealth.Status.UP);
        }
    }

    @Test
    void streamsAChat() {
        wm.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream").withBody(
                        "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"q\","
                                + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\n"
                                + "data: [DONE]\n\n")));
        try (InferenceBackend backend = openAi(Map.of())) {
            List<ChatCompletionChunk> chunks = backend.chat(ChatCompletionRequest.of("q", List.of(ChatMessage.user("x"))))
                    .collectList().block(Duration.ofSeconds(10));
            assertThat(chunks).hasSize(1);
            wm.verify(postRequestedFor(urlEqualTo("/v1/chat/completions"))
                    .withHeader("Authorization", equalTo("Bearer sk-vllm-key")));
            // llama.cpp's own field is not sent to servers that may reject unknown fields.
            assertThat(wm.findAll(postRequestedFor(urlEqualTo("/v1/chat/completions"))).getFirst().getBodyAsString())
                    .doesNotContain("timings_per_token");
        }
    }

    @Test
    void itDoesNotStartServers() {
        assertThatThrownBy(() -> openAi(Map.of("binary", "/usr/bin/llama-server")))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("binary");
        assertThatThrownBy(() -> openAi(Map.of("health-path", "v1/models")))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("health-path");
    }

    private static void await(Runnable check) {
        long end = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (true) {
            try {
                check.run();
                return;
            } catch (AssertionError e) {
                if (System.nanoTime() > end) {
                    throw e;
                }
                try {
                    Thread.sleep(50);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }
}
