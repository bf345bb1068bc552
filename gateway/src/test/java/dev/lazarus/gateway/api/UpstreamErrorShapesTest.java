package dev.lazarus.gateway.api;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.containing;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.github.tomakehurst.wiremock.WireMockServer;
import dev.lazarus.gateway.routing.AttemptLoop;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Issue 14, finding 4 and the error half of finding 3, through the gateway: vLLM's "maximum context
 * length" 400 moves the request on to a fallback with a longer context (and says so in the log), and
 * an upstream's own {@code code} and {@code param} reach the client instead of null.
 */
@SpringBootTest(properties = {"lazarus.security.api-keys[0]=shape-key", "lazarus.health.interval=1h"})
@ActiveProfiles("test")
@AutoConfigureWebTestClient
class UpstreamErrorShapesTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static WireMockServer shortContext;
    private static WireMockServer longContext;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        shortContext = new WireMockServer(options().bindAddress("127.0.0.1").dynamicPort());
        longContext = new WireMockServer(options().bindAddress("127.0.0.1").dynamicPort());
        shortContext.start();
        longContext.start();
        for (WireMockServer s : new WireMockServer[] {shortContext, longContext}) {
            s.stubFor(get(urlEqualTo("/health")).willReturn(okJson("{\"status\":\"ok\"}")));
        }
        shortContext.stubFor(post(urlEqualTo("/v1/chat/completions")).withRequestBody(containing("long-prompt"))
                .willReturn(aResponse().withStatus(400).withHeader("Content-Type", "application/json").withBody("""
                        {"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 9000 tokens (8000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}""")));
        shortContext.stubFor(post(urlEqualTo("/v1/chat/completions")).withRequestBody(containing("forbidden-topic"))
                .willReturn(aResponse().withStatus(400).withHeader("Content-Type", "application/json").withBody("""
                        {"error":{"message":"Your request was rejected as a result of our safety system.","type":"invalid_request_error","param":"messages","code":"content_policy_violation"}}""")));
        longContext.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream").withBody(
                        "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"big\","
                                + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"fits\"},\"finish_reason\":\"stop\"}]}\n\n"
                                + "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"big\","
                                + "\"choices\":[],\"usage\":{\"prompt_tokens\":8000,\"completion_tokens\":1,\"total_tokens\":8001}}\n\n"
                                + "data: [DONE]\n\n")));
        registry.add("lazarus.backends[0].id", () -> "short");
        registry.add("lazarus.backends[0].kind", () -> "llamacpp");
        registry.add("lazarus.backends[0].settings.url", shortContext::baseUrl);
        registry.add("lazarus.backends[0].settings.model-name", () -> "small");
        registry.add("lazarus.backends[1].id", () -> "long");
        registry.add("lazarus.backends[1].kind", () -> "llamacpp");
        registry.add("lazarus.backends[1].settings.url", longContext::baseUrl);
        registry.add("lazarus.backends[1].settings.model-name", () -> "big");
        registry.add("lazarus.models[0].name", () -> "m");
        registry.add("lazarus.models[0].backends[0]", () -> "short");
        registry.add("lazarus.models[0].backends[1]", () -> "long");
        registry.add("lazarus.models[1].name", () -> "short-only");
        registry.add("lazarus.models[1].backends[0]", () -> "short");
    }

    @AfterAll
    static void stop() {
        shortContext.stop();
        longContext.stop();
    }

    @Autowired
    WebTestClient client;

    private WebTestClient.ResponseSpec chat(String model, String content) {
        return client.mutate().responseTimeout(Duration.ofSeconds(30)).build().post().uri("/v1/chat/completions")
                .header("Authorization", "Bearer shape-key").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"" + content + "\"}]}")
                .exchange();
    }

    @Test
    void aContextOverflowOnOneBackendTriesTheNextAndIsLogged() {
        ListAppender<ILoggingEvent> captured = new ListAppender<>();
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        captured.setContext(context);
        captured.start();
        context.getLogger(AttemptLoop.class).addAppender(captured);
        try {
            byte[] body = chat("m", "long-prompt").expectStatus().isOk().expectBody().returnResult().getResponseBody();
            assertThat(JSON.readTree(body).at("/choices/0/message/content").asString()).isEqualTo("fits");
        } finally {
            context.getLogger(AttemptLoop.class).detachAppender(captured);
        }
        assertThat(captured.list).anySatisfy(e -> {
            assertThat(e.getLevel()).isEqualTo(Level.WARN);
            assertThat(e.getFormattedMessage()).contains("'short'").contains("CONTEXT_LENGTH_EXCEEDED")
                    .contains("maximum context length is 4096").contains("trying 'long'");
        });
    }

    @Test
    void theLastBackendsContextOverflowIsTheClients400WithItsCode() {
        JsonNode error = error(chat("short-only", "long-prompt").expectStatus().isBadRequest());
        assertThat(error.get("code").asString()).isEqualTo("context_length_exceeded");
        assertThat(error.get("param").asString()).isEqualTo("messages");
        assertThat(error.get("message").asString()).contains("maximum context length is 4096 tokens");
    }

    @Test
    void anUpstreamsCodeAndParamReachTheClient() {
        JsonNode error = error(chat("short-only", "forbidden-topic").expectStatus().isBadRequest());
        assertThat(error.get("code").asString()).isEqualTo("content_policy_violation");
        assertThat(error.get("type").asString()).isEqualTo("invalid_request_error");
        assertThat(error.get("param").asString()).isEqualTo("messages");
    }

    private static JsonNode error(WebTestClient.ResponseSpec spec) {
        return JSON.readTree(spec.expectBody().returnResult().getResponseBody()).get("error");
    }
}
