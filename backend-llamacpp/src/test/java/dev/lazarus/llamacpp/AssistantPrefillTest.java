package dev.lazarus.llamacpp;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.tomakehurst.wiremock.WireMockServer;
import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendConfigException;
import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 14, finding 2: {@code assistant-prefill: auto|true|false}. The {@code llamacpp} kind used to
 * claim the capability whatever the server did; {@code auto} now learns from the first refusal.
 */
class AssistantPrefillTest {

    private static final String REFUSAL = """
            {"error":{"code":400,"message":"This model does not support assistant message prefill","type":"invalid_request_error"}}""";

    private static WireMockServer wm;
    private LlamaCppBackend backend;

    @BeforeAll
    static void startWireMock() {
        wm = new WireMockServer(options().bindAddress("127.0.0.1").dynamicPort());
        wm.start();
        wm.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(400).withBody(REFUSAL)));
    }

    @AfterAll
    static void stopWireMock() {
        wm.stop();
    }

    @AfterEach
    void close() {
        if (backend != null) {
            backend.close();
        }
    }

    private LlamaCppBackend backend(String mode) {
        Map<String, Object> settings = new HashMap<>(Map.of("url", wm.baseUrl(), "model-name", "tiny"));
        if (mode != null) {
            settings.put("assistant-prefill", mode);
        }
        backend = new LlamaCppBackend(new BackendConfig("prefill", "llamacpp", settings));
        return backend;
    }

    private static boolean prefill(LlamaCppBackend b) {
        return b.describe().capabilities().assistantPrefill();
    }

    private static void continueAnAnswer(LlamaCppBackend b) {
        ChatCompletionRequest request = ChatCompletionRequest.of("tiny",
                List.of(ChatMessage.user("hello"), ChatMessage.assistant("Hel")));
        assertThatThrownBy(() -> b.chat(request).blockLast(Duration.ofSeconds(10)))
                .isInstanceOfSatisfying(BackendException.class,
                        e -> assertThat(e.kind()).isEqualTo(BackendErrorKind.INVALID_REQUEST));
    }

    @Test
    void autoClaimsPrefillUntilTheServerRefusesIt() {
        LlamaCppBackend b = backend(null);
        assertThat(prefill(b)).isTrue();
        // A 400 to a request that does not end in an assistant message says nothing about prefill.
        assertThatThrownBy(() -> b.chat(ChatCompletionRequest.of("tiny", List.of(ChatMessage.user("hello"))))
                .blockLast(Duration.ofSeconds(10))).isInstanceOf(BackendException.class);
        assertThat(prefill(b)).isTrue();
        continueAnAnswer(b);
        assertThat(prefill(b)).isFalse();
    }

    @Test
    void trueAndFalseAreFixed() {
        LlamaCppBackend yes = backend("true");
        continueAnAnswer(yes);
        assertThat(prefill(yes)).isTrue();
        yes.close();
        assertThat(prefill(backend("false"))).isFalse();
    }

    @Test
    void anyOtherValueIsRefusedNamingTheSetting() {
        assertThatThrownBy(() -> backend("sometimes"))
                .isInstanceOfSatisfying(BackendConfigException.class,
                        e -> assertThat(e.setting()).isEqualTo("assistant-prefill"));
    }
}
