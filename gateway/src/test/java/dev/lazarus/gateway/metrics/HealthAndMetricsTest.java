package dev.lazarus.gateway.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.gateway.resilience.HealthMonitor;
import dev.lazarus.gateway.testing.GatewayTestSupport;
import dev.lazarus.gateway.testing.ScriptedBackend;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import org.springframework.beans.factory.annotation.Autowired;

class HealthAndMetricsTest extends GatewayTestSupport {

    @Autowired
    HealthMonitor monitor;

    @Autowired
    HealthEndpoint endpoint;

    @Autowired
    JsonMapper json;

    /**
     * The "details" health group as the admin token sees it at {@code /actuator/health/details} (this
     * shared context has no admin token; ActuatorHardeningTest covers the HTTP side).
     */
    private JsonNode details() {
        return json.readTree(json.writeValueAsString(endpoint.healthForPath("details")));
    }

    /** Health endpoints show the monitor's last checks: take one now instead of waiting for the next. */
    private void setHealth(ScriptedBackend backend, BackendHealth.Status status) {
        backend.setHealth(status);
        monitor.refresh().block(java.time.Duration.ofSeconds(5));
    }

    @Test
    void readinessIsUpWhileEveryModelHasALiveBackend() {
        client.get().uri("/actuator/health/readiness").exchange()
                .expectStatus().isOk()
                .expectBody().jsonPath("$.status").isEqualTo("UP");
        JsonNode details = details();
        assertThat(details.at("/components/backends/components/alpha/status").asString()).isEqualTo("UP");
        assertThat(details.at("/components/routes/details/test-model").asString()).isEqualTo("UP");
        // anonymous callers get the status only (the details are behind the admin token)
        client.get().uri("/actuator/health").exchange()
                .expectBody().jsonPath("$.status").isEqualTo("UP").jsonPath("$.components").doesNotExist();
    }

    @Test
    void aDeadFallbackIsShownButKeepsTheGatewayReady() {
        ScriptedBackend alpha = backend("alpha");
        setHealth(alpha, BackendHealth.Status.DOWN);
        try {
            client.get().uri("/actuator/health/readiness").exchange().expectStatus().isOk();
            assertThat(details().at("/components/backends/components/alpha/status").asString()).isEqualTo("DOWN");
        } finally {
            setHealth(alpha, BackendHealth.Status.UP);
        }
    }

    @Test
    void aModelWhoseOnlyBackendIsLoadingMakesTheGatewayUnready() {
        ScriptedBackend mapped = backend("mapped");
        setHealth(mapped, BackendHealth.Status.LOADING);
        try {
            client.get().uri("/actuator/health/readiness").exchange()
                    .expectStatus().isEqualTo(503)
                    .expectBody().jsonPath("$.status").isEqualTo("OUT_OF_SERVICE");
            client.get().uri("/actuator/health/liveness").exchange().expectStatus().isOk();
        } finally {
            setHealth(mapped, BackendHealth.Status.UP);
        }
        client.get().uri("/actuator/health/readiness").exchange().expectStatus().isOk();
    }

    @Test
    void prometheusShowsCallsTtftAndTokens() {
        post("/v1/chat/completions",
                "{\"model\": \"chat-only-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}]}")
                .expectStatus().isOk();
        // The call is metered as it ends, which may be just after the client has its answer: scrape until it shows.
        List<Pattern> metered = Stream.of(
                "lazarus_backend_calls_total\\{[^}]*backend=\"chat-only\"[^}]*outcome=\"success\"[^}]*} [1-9]",
                "lazarus_completion_tokens_total\\{[^}]*backend=\"chat-only\"[^}]*} [1-9]",
                "lazarus_gateway_overhead_seconds_count\\{[^}]*model=\"chat-only-model\"[^}]*} [1-9]").map(Pattern::compile).toList();
        long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        String metrics = scrape();
        while (!allFound(metered, metrics) && System.nanoTime() < until) {
            metrics = scrape();
        }
        assertThat(metrics)
                .containsPattern("lazarus_backend_calls_total\\{[^}]*backend=\"chat-only\"[^}]*outcome=\"success\"[^}]*} [1-9]")
                .containsPattern("lazarus_backend_ttft_seconds_count\\{[^}]*backend=\"chat-only\"[^}]*} [1-9]")
                .containsPattern("lazarus_completion_tokens_total\\{[^}]*backend=\"chat-only\"[^}]*} [1-9]")
                .containsPattern("lazarus_prompt_tokens_total\\{[^}]*backend=\"chat-only\"[^}]*} [1-9]")
                .containsPattern("lazarus_backend_ttft_seconds_bucket\\{[^}]*backend=\"chat-only\"")
                .containsPattern("lazarus_backend_inter_token_seconds_count\\{[^}]*backend=\"chat-only\"[^}]*} [1-9]")
                .containsPattern("lazarus_gateway_overhead_seconds_count\\{[^}]*model=\"chat-only-model\"[^}]*} [1-9]")
                .containsPattern("resilience4j_circuitbreaker_state\\{[^}]*name=\"chat-only\"[^}]*state=\"closed\"[^}]*} 1")
                .containsPattern("lazarus_backend_state\\{[^}]*backend=\"chat-only\"[^}]*state=\"active\"[^}]*} 1")
                .containsPattern("lazarus_backend_state\\{[^}]*backend=\"chat-only\"[^}]*state=\"rolled_back\"[^}]*} 0")
                .containsPattern("lazarus_backend_draining\\{[^}]*backend=\"chat-only\"[^}]*} 0")
                .containsPattern("lazarus_backend_up\\{[^}]*backend=\"chat-only\"[^}]*} 1")
                // Spring's per-request observation is off (its cost on the relay path; docs/configuration.md).
                .doesNotContain("http_server_requests");
    }

    private static boolean allFound(List<Pattern> patterns, String text) {
        return patterns.stream().allMatch(p -> p.matcher(text).find());
    }

    private String scrape() {
        return client.get().uri("/actuator/prometheus").exchange()
                .expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
    }
}
