package dev.lazarus.gateway.admin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.api.ApiError;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.publisher.Mono;

/**
 * Issue 35 (Info): {@code /actuator/prometheus} shows backend ids, models and breaker states, so it takes
 * the metrics token (else the admin token); and it shows no file-system path (the disk meters were tagged
 * with the working directory).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "lazarus.admin.token=metrics-test-admin-7Hq2", "lazarus.metrics.token=" + MetricsAccessTest.METRICS_TOKEN})
@ActiveProfiles("test")
@AutoConfigureWebTestClient
class MetricsAccessTest {

    static final String METRICS_TOKEN = "scrape-token-K8v3Nw";

    @Autowired
    WebTestClient client;

    @Test
    void theScrapeTakesTheMetricsTokenAndShowsNoPath() {
        client.get().uri("/actuator/prometheus").exchange().expectStatus().isUnauthorized()
                .expectBody().jsonPath("$.error.code").isEqualTo("invalid_api_key");
        client.get().uri("/actuator/prometheus").header("Authorization", "Bearer wrong-token-123")
                .exchange().expectStatus().isUnauthorized();
        String page = client.get().uri("/actuator/prometheus").header("Authorization", "Bearer " + METRICS_TOKEN)
                .exchange().expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
        assertThat(page).contains("lazarus_");
        assertThat(page).doesNotContain(System.getProperty("user.dir")).doesNotContain("disk_free");
    }

    @Test
    void withoutAMetricsTokenTheAdminTokenGuardsTheScrape() {
        AdminGuardProperties guard = new AdminGuardProperties(12, 5, Duration.ofSeconds(1), Duration.ofMinutes(5), 600,
                List.of());
        MetricsTokenFilter filter = new MetricsTokenFilter(new MetricsProperties(null),
                new AdminProperties("fallback-admin-token-1"), new AdminLoginThrottle(guard, System::nanoTime),
                new ClientAddress(List.of()));
        AtomicBoolean passed = new AtomicBoolean();
        Throwable refused = filter.filter(MockServerWebExchange.from(MockServerHttpRequest.get("/actuator/prometheus")),
                exchange -> Mono.fromRunnable(() -> passed.set(true))).then(Mono.<Throwable>empty())
                .onErrorResume(Mono::just).block();
        assertThat(refused).isInstanceOf(ApiError.class);
        assertThat(passed).isFalse();
        filter.filter(MockServerWebExchange.from(MockServerHttpRequest.get("/actuator/prometheus")
                        .header("Authorization", "Bearer fallback-admin-token-1")),
                exchange -> Mono.fromRunnable(() -> passed.set(true))).block();
        assertThat(passed).isTrue();
    }
}
