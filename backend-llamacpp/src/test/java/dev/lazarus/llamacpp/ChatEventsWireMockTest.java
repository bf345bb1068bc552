package dev.lazarus.llamacpp;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.http.Fault;
import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatEvent;
import dev.lazarus.backend.api.openai.ChatEvents;
import dev.lazarus.backend.api.openai.ChatMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A streamed chat answer relayed as its server's events ({@link LlamaCppBackend#chatEvents}). */
class ChatEventsWireMockTest {

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static WireMockServer wm;
    private LlamaCppBackend backend;

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
    void newBackend() {
        wm.resetAll();
        backend = new LlamaCppBackend(new BackendConfig("wm", "llamacpp", Map.of("url", wm.baseUrl(), "model-name",
                "tiny", "first-token-timeout", "5s", "idle-timeout", "5s", "connect-timeout", "2s")));
    }

    @AfterEach
    void close() {
        backend.close();
    }

    private static void answer(String body) {
        wm.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream").withBody(body)));
    }

    private List<ChatEvent> events() {
        return backend.chatEvents(ChatCompletionRequest.of("tiny", List.of(ChatMessage.user("hello"))))
                .collectList().block(WAIT).stream().map(ChatEvents::events).flatMap(List::stream).toList();
    }

    @Test
    void passesTheServersBytesOnWithWhatTheGatewayReadsOfThem() {
        String token = "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"tiny\","
                + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"},\"finish_reason\":null}],\"x_vendor\":[1,{}]}";
        String last = "{\"id\":\"chatcmpl-1\",\"created\":1,\"model\":\"tiny\",\"choices\":[{\"index\":0,\"delta\":{},"
                + "\"finish_reason\":\"stop\"}]}";
        String usage = "{\"id\":\"chatcmpl-1\",\"created\":1,\"model\":\"tiny\",\"choices\":[],\"usage\":"
                + "{\"prompt_tokens\":5,\"completion_tokens\":1,\"total_tokens\":6}}";
        answer("data: " + token + "\n\n: keep-alive\n\ndata: " + last + "\n\ndata: " + usage + "\n\ndata: [DONE]\n\n"
                + "data: {\"after\":\"done\"}\n\n");

        List<ChatEvent> events = events();

        assertThat(events).hasSize(3).allSatisfy(e -> assertThat(e.isRaw()).isTrue());
        byte[] id = "\"gw\"".getBytes(StandardCharsets.US_ASCII);
        byte[] created = "1".getBytes(StandardCharsets.US_ASCII);
        byte[] model = "\"tiny\"".getBytes(StandardCharsets.US_ASCII);
        assertThat(new String(events.get(0).raw().withIdentity(id, created, model), StandardCharsets.UTF_8))
                .isEqualTo(token.replace("\"chatcmpl-1\"", "\"gw\""));
        assertThat(events.get(0).text()).isEqualTo("Hel");
        assertThat(events.get(1).finishReason()).isTrue();
        assertThat(events.get(2).usage().completionTokens()).isEqualTo(1);
        assertThat(events.get(2).hasChoices()).isFalse();
    }

    @Test
    void readsAChunkOfAnotherShapeIntoTypes() {
        String both = "{\"id\":\"c\",\"created\":1,\"model\":\"tiny\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},"
                + "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1,\"total_tokens\":6}}";
        answer("data: " + both + "\n\ndata: [DONE]\n\n");

        List<ChatEvent> events = events();

        assertThat(events).hasSize(1);
        assertThat(events.getFirst().isRaw()).isFalse();
        assertThat(events.getFirst().chunk().contentDelta()).isEqualTo("a");
        assertThat(events.getFirst().usage().totalTokens()).isEqualTo(6);
    }

    @Test
    void anErrorInTheStreamOrAStreamCutBeforeItsEndFails() {
        answer("data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"
                + "data: {\"error\":{\"code\":500,\"message\":\"Context size has been exceeded.\",\"type\":\"server_error\"}}\n\n");
        assertThatThrownBy(this::events).isInstanceOf(BackendException.class).hasMessageContaining("Context size");

        answer("data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n");
        assertThatThrownBy(this::events).isInstanceOfSatisfying(BackendException.class,
                e -> assertThat(e.kind()).isEqualTo(BackendErrorKind.UPSTREAM));

        wm.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(503)
                .withHeader("Content-Type", "application/json").withBody("{\"error\":{\"message\":\"loading\"}}")));
        assertThatThrownBy(this::events).isInstanceOf(BackendException.class);

        wm.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withFault(Fault.CONNECTION_RESET_BY_PEER)));
        assertThatThrownBy(this::events).isInstanceOf(BackendException.class);
    }
}
