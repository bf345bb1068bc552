package dev.lazarus.llamacpp;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.equalToJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.github.tomakehurst.wiremock.WireMockServer;
import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendConfigException;
import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.JsonEndpoint;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The error shapes of the JSON endpoints a real llama-server gives only when misconfigured or broken (its 501 when
 * not started with {@code --embeddings}, a 400 of an OpenAI-compatible server, a body that is no JSON object), and
 * which endpoints each kind serves. Their answers themselves are tested against a real llama-server
 * (gateway: {@code JsonEndpointsRealServerTest}).
 */
class JsonEndpointsWireMockTest {

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

    private static LlamaCppBackend backend(String kind, Map<String, Object> more) {
        Map<String, Object> settings = new java.util.HashMap<>(Map.of("url", wm.baseUrl(), "model-name", "m",
                "first-token-timeout", "5s", "health-timeout", "2s"));
        settings.putAll(more);
        return new LlamaCppBackend(new BackendConfig("wm", kind, settings));
    }

    private static BackendException failure(JsonEndpoint endpoint, int status, String body) {
        wm.resetAll();
        wm.stubFor(post(urlEqualTo(endpoint.path())).willReturn(aResponse().withStatus(status)
                .withHeader("Content-Type", "application/json").withBody(body)));
        try (LlamaCppBackend backend = backend("llamacpp", Map.of())) {
            Throwable t = catchThrowable(() -> backend.json(endpoint, Map.of("model", "m", "input", "hi"))
                    .block(Duration.ofSeconds(10)));
            assertThat(t).isInstanceOf(BackendException.class);
            return (BackendException) t;
        }
    }

    @Test
    void aServerNotStartedForTheEndpointIsNotServingItAndAnotherMay() {
        BackendException e = failure(JsonEndpoint.EMBEDDINGS, 501, """
                {"error":{"code":501,"message":"This server does not support embeddings. Start it with `--embeddings`","type":"not_supported_error"}}""");
        assertThat(e.kind()).isEqualTo(BackendErrorKind.MODEL_NOT_FOUND);
        assertThat(e.kind().tryNextBackend()).isTrue();
        assertThat(e.kind().backendFault()).as("no breaker charged for a missing --embeddings").isFalse();
        assertThat(e.getMessage()).contains("does not support embeddings");
    }

    @Test
    void anUpstreamsRefusalOfTheRequestIsTheClients() {
        BackendException e = failure(JsonEndpoint.RERANK, 400, """
                {"error":{"code":400,"message":"\\"documents\\" must be a non-empty string array","type":"invalid_request_error"}}""");
        assertThat(e.kind()).isEqualTo(BackendErrorKind.INVALID_REQUEST);
        assertThat(e.getMessage()).contains("documents");
    }

    @Test
    void anAnswerThatIsNoJsonObjectIsTheUpstreamsFault() {
        BackendException e = failure(JsonEndpoint.TOKENIZE, 200, "[1, 2, 3]");
        assertThat(e.kind()).isEqualTo(BackendErrorKind.UPSTREAM);
    }

    @Test
    void theRequestGoesAsItCameAndTheAnswerComesBackWhole() {
        wm.resetAll();
        wm.stubFor(post(urlEqualTo("/v1/embeddings"))
                .withRequestBody(equalToJson("{\"model\":\"m\",\"input\":[\"a\",\"b\"],\"encoding_format\":\"base64\"}"))
                .willReturn(aResponse().withStatus(200).withHeader("Content-Type", "application/json").withBody("""
                        {"model":"m","object":"list","usage":{"prompt_tokens":2,"total_tokens":2},"data":[{"embedding":"AAAAAA==","index":0,"object":"embedding"}]}""")));
        try (LlamaCppBackend backend = backend("openai", Map.of())) {
            Map<String, Object> answer = backend.json(JsonEndpoint.EMBEDDINGS,
                    Map.of("model", "m", "input", List.of("a", "b"), "encoding_format", "base64")).block(Duration.ofSeconds(10));
            assertThat(answer).containsEntry("object", "list").containsEntry("model", "m");
            assertThat(answer.get("data")).isEqualTo(List.of(Map.of("embedding", "AAAAAA==", "index", 0, "object", "embedding")));
        }
    }

    @Test
    void whichEndpointsEachKindServes() {
        try (LlamaCppBackend llama = backend("llamacpp", Map.of());
             LlamaCppBackend openAi = backend("openai", Map.of());
             LlamaCppBackend chosen = backend("llamacpp", Map.of("endpoints", List.of("tokenize", "detokenize")))) {
            assertThat(llama.describe().capabilities().jsonEndpoints()).isEqualTo(EnumSet.allOf(JsonEndpoint.class));
            assertThat(openAi.describe().capabilities().jsonEndpoints()).containsExactly(JsonEndpoint.EMBEDDINGS);
            assertThat(chosen.describe().capabilities().jsonEndpoints())
                    .containsExactly(JsonEndpoint.TOKENIZE, JsonEndpoint.DETOKENIZE);
            // one it does not serve is refused without a call
            assertThatThrownBy(() -> chosen.json(JsonEndpoint.EMBEDDINGS, Map.of("model", "m")).block())
                    .isInstanceOf(BackendException.class).hasMessageContaining("/v1/embeddings");
        }
        assertThatThrownBy(() -> backend("llamacpp", Map.of("endpoints", "embeddings, chat")))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("'chat'");
    }
}
