package dev.lazarus.gateway.admin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.policy.Actor;
import dev.lazarus.gateway.policy.PolicyEngine;
import dev.lazarus.gateway.policy.PolicyState;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Issue 17 (9): an operator's {@code reason} has a length limit; drain and undrain journal their own
 * reason, not the state's; a failed admin login is journalled without the token. Same context as
 * {@link AdminApiTest}.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "lazarus.admin.token=admin-secret",
        "lazarus.policy.backends.alpha.role=candidate",
        "lazarus.policy.gate.max-ttft=60s"})
@ActiveProfiles("test")
@AutoConfigureWebTestClient
class AdminReasonsTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Autowired
    WebTestClient client;

    @Autowired
    PolicyEngine engine;

    @AfterEach
    void undrain() {
        if (engine.state("beta").orElseThrow().draining()) {
            engine.drain("beta", Actor.OPERATOR, false);
        }
    }

    @Test
    void aReasonOverTheLimitIsA400AndChangesNothing() {
        String tooLong = "{\"reason\":\"" + "x".repeat(1000) + "\"}";
        for (String action : new String[] {"disable", "drain", "promote", "rollback", "enable", "undrain"}) {
            JsonNode error = JSON.readTree(post("/admin/backends/beta/" + action, tooLong)
                    .expectStatus().isBadRequest().expectBody(String.class).returnResult().getResponseBody()).path("error");
            assertThat(error.path("type").asString()).as(action).isEqualTo("invalid_request_error");
            assertThat(error.path("param").asString()).as(action).isEqualTo("reason");
            assertThat(error.path("code").asString()).as(action).isEqualTo("invalid_value");
        }
        assertThat(engine.state("beta").orElseThrow().state()).isEqualTo(PolicyState.ACTIVE);
        assertThat(engine.state("beta").orElseThrow().draining()).isFalse();
        post("/admin/backends/beta/drain", "{\"reason\":\"" + "y".repeat(AdminRequests.MAX_REASON) + "\"}")
                .expectStatus().isOk();
    }

    /** Issue 35: a key given twice in an admin body is a 400, not the last one quietly winning. */
    @Test
    void aBodyWithADuplicateKeyIsA400AndChangesNothing() {
        for (String body : new String[] {"{\"reason\":\"a\",\"reason\":\"b\"}",
                "{\"backend\":\"alpha\",\"prompts\":[\"x\"],\"prompts\":[\"y\"]}"}) {
            String path = body.contains("prompts") ? "/admin/benchmarks" : "/admin/backends/beta/drain";
            JsonNode error = JSON.readTree(post(path, body).expectStatus().isBadRequest().expectBody(String.class)
                    .returnResult().getResponseBody()).path("error");
            assertThat(error.path("type").asString()).isEqualTo("invalid_request_error");
            assertThat(error.path("message").asString()).containsIgnoringCase("duplicate");
        }
        assertThat(engine.state("beta").orElseThrow().draining()).isFalse();
    }

    @Test
    void drainAndUndrainJournalTheirOwnReason() {
        String stateReason = engine.state("beta").orElseThrow().reason();
        post("/admin/backends/beta/drain", "{\"reason\":\"kernel upgrade at 06:00\"}").expectStatus().isOk();
        post("/admin/backends/beta/undrain", null).expectStatus().isOk();
        JsonNode events = events();
        assertThat(events.path(0).path("action").asString()).isEqualTo("undrain");
        assertThat(events.path(0).path("reason").asString()).isEqualTo("undrained by operator");
        assertThat(events.path(1).path("action").asString()).isEqualTo("drain");
        assertThat(events.path(1).path("reason").asString()).isEqualTo("kernel upgrade at 06:00");
        assertThat(engine.state("beta").orElseThrow().reason()).as("the state's own reason stays").isEqualTo(stateReason);
    }

    @Test
    void aFailedLoginIsJournalledWithoutTheToken() {
        client.get().uri("/admin/backends").header("Authorization", "Bearer guessed-admin-token-77")
                .exchange().expectStatus().isUnauthorized();
        // One entry per window: this failure or an earlier one of this shared context stands for it.
        String journal = events().toString();
        assertThat(journal).contains("admin-login-failed").contains("UNAUTHENTICATED")
                .doesNotContain("guessed-admin-token");
    }

    @Test
    void aRouteWhoseBackendsThePolicyLeftOutSaysWhyInIts503() {
        post("/admin/backends/beta/drain", "{\"reason\":\"maintenance\"}").expectStatus().isOk();
        JsonNode error = JSON.readTree(client.post().uri("/v1/chat/completions").header("Authorization", "Bearer test-key-1")
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"model\":\"test-model\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")
                .exchange().expectStatus().isEqualTo(503).expectBody(String.class).returnResult().getResponseBody())
                .path("error");
        assertThat(error.path("message").asString()).contains("beta (drained by an operator)")
                .contains("alpha (candidate)");
    }

    @Test
    void anUnknownModelsNotFoundListsTheModelsThatExist() {
        JsonNode error = JSON.readTree(client.post().uri("/v1/chat/completions").header("Authorization", "Bearer test-key-1")
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"model\":\"test-modle\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")
                .exchange().expectStatus().isNotFound().expectBody(String.class).returnResult().getResponseBody())
                .path("error");
        assertThat(error.path("code").asString()).isEqualTo("model_not_found");
        assertThat(error.path("message").asString()).startsWith("The model 'test-modle' does not exist")
                .contains("Available models: test-model, mapped-model");
    }

    private JsonNode events() {
        return JSON.readTree(client.get().uri("/admin/events?size=50").header("Authorization", "Bearer admin-secret")
                .exchange().expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody()).path("data");
    }

    private WebTestClient.ResponseSpec post(String path, String body) {
        WebTestClient.RequestBodySpec spec = client.mutate().responseTimeout(Duration.ofSeconds(30)).build().post()
                .uri(path).header("Authorization", "Bearer admin-secret");
        return body == null ? spec.exchange() : spec.contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange();
    }
}
