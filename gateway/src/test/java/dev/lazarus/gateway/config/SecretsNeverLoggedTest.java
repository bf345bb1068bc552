package dev.lazarus.gateway.config;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.client.WireMock;
import dev.lazarus.gateway.testing.CapturedLogs;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * No secret reaches a log line: the {@code /v1} API key, the admin token, a backend's upstream key,
 * and whatever a client sends in {@code Authorization} or {@code X-Api-Key} (a wrong key is often
 * someone's real key for another service). Every log event of a run of requests that pass, fail
 * authentication and fail over from a failing upstream is captured, with the gateway's, Spring
 * web's and Reactor Netty's loggers at DEBUG, and searched for each secret.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "lazarus.admin.token=log-test-admin-4c1d9",
        "lazarus.security.api-keys[0]=log-test-key-0b5e7"})
@ActiveProfiles("test")
@AutoConfigureWebTestClient
class SecretsNeverLoggedTest {

    private static final String API_KEY = "log-test-key-0b5e7";
    private static final String ADMIN_TOKEN = "log-test-admin-4c1d9";
    private static final String UPSTREAM_KEY = "log-test-upstream-93ae";
    private static final String WRONG_KEY = "log-test-wrong-77f2";
    private static final String X_API_KEY = "log-test-xapikey-51c0";
    private static final List<String> SECRETS = List.of(API_KEY, ADMIN_TOKEN, UPSTREAM_KEY, WRONG_KEY, X_API_KEY);
    private static final List<String> LOUD = List.of("dev.lazarus", "org.springframework.web", "org.springframework.http",
            "reactor.netty");

    private static WireMockServer upstream;

    /**
     * A llama.cpp backend with an upstream key, played by WireMock: healthy, but its completions fail
     * with a 500 that quotes the request's Authorization header (as a careless proxy might); then a
     * scripted fallback.
     */
    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        upstream = new WireMockServer(options().bindAddress("127.0.0.1").dynamicPort().globalTemplating(true));
        upstream.start();
        upstream.stubFor(get(urlEqualTo("/health")).willReturn(okJson("{\"status\":\"ok\"}")));
        upstream.stubFor(WireMock.post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(500)
                .withHeader("Content-Type", "application/json")
                .withBody("{\"error\":{\"code\":500,\"message\":\"bad auth {{request.headers.Authorization}}\","
                        + "\"type\":\"server_error\"}}")));
        registry.add("lazarus.backends[0].id", () -> "upstream");
        registry.add("lazarus.backends[0].kind", () -> "llamacpp");
        registry.add("lazarus.backends[0].settings.url", () -> upstream.baseUrl());
        registry.add("lazarus.backends[0].settings.api-key", () -> UPSTREAM_KEY);
        registry.add("lazarus.backends[0].settings.connect-timeout", () -> "2s");
        registry.add("lazarus.backends[1].id", () -> "alpha");
        registry.add("lazarus.backends[1].kind", () -> "scripted");
        registry.add("lazarus.models[0].name", () -> "m");
        registry.add("lazarus.models[0].backends[0]", () -> "upstream");
        registry.add("lazarus.models[0].backends[1]", () -> "alpha");
    }

    @AfterAll
    static void stopUpstream() {
        upstream.stop();
    }

    @Autowired
    WebTestClient client;

    private final CapturedLogs captured = new CapturedLogs();

    @BeforeEach
    void capture() {
        captured.start(LOUD);
    }

    @AfterEach
    void release() {
        captured.stop();
    }

    @Test
    void noSecretIsLoggedOnAnyPath() {
        WebTestClient slow = client.mutate().responseTimeout(Duration.ofSeconds(60)).build();
        String chat = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
        // served by the fallback after the upstream refused the connection (logged as a failover)
        slow.post().uri("/v1/chat/completions").header("Authorization", "Bearer " + API_KEY)
                .header("X-Api-Key", X_API_KEY).contentType(MediaType.APPLICATION_JSON).bodyValue(chat)
                .exchange().expectStatus().isOk();
        slow.post().uri("/v1/chat/completions").header("Authorization", "Bearer " + WRONG_KEY)
                .contentType(MediaType.APPLICATION_JSON).bodyValue(chat).exchange().expectStatus().isUnauthorized();
        slow.get().uri("/v1/models").header("X-Api-Key", X_API_KEY).exchange().expectStatus().isUnauthorized();
        slow.post().uri("/v1/chat/completions").header("Authorization", "Bearer " + API_KEY)
                .contentType(MediaType.APPLICATION_JSON).bodyValue("{\"model\": ").exchange().expectStatus().isBadRequest();
        slow.get().uri("/admin/backends").header("Authorization", "Bearer " + ADMIN_TOKEN).exchange()
                .expectStatus().isOk();
        slow.get().uri("/admin/backends").header("Authorization", "Bearer " + WRONG_KEY).exchange()
                .expectStatus().isUnauthorized();
        slow.post().uri("/admin/backends/upstream/disable").header("Authorization", "Bearer " + ADMIN_TOKEN)
                .header("X-Api-Key", X_API_KEY).contentType(MediaType.TEXT_PLAIN).bodyValue("reason=rotate").exchange()
                .expectStatus().isEqualTo(415);

        upstream.verify(postRequestedFor(urlEqualTo("/v1/chat/completions"))
                .withHeader("Authorization", equalTo("Bearer " + UPSTREAM_KEY)));
        List<ILoggingEvent> events = captured.events();
        List<String> lines = events.stream().map(SecretsNeverLoggedTest::render).toList();
        assertThat(lines).as("the capture saw the request path, including the upstream's failure")
                .anyMatch(line -> line.contains("'upstream'") && line.contains("UPSTREAM"));
        for (String secret : SECRETS) {
            assertThat(lines).as("log lines holding %s", secret).noneMatch(line -> line.contains(secret));
        }
    }

    private static String render(ILoggingEvent event) {
        StringBuilder line = new StringBuilder(event.getLoggerName()).append(' ').append(event.getFormattedMessage());
        event.getMDCPropertyMap().forEach((k, v) -> line.append(' ').append(k).append('=').append(v));
        if (event.getThrowableProxy() != null) {
            line.append('\n').append(ThrowableProxyUtil.asString(event.getThrowableProxy()));
        }
        return line.toString();
    }
}
