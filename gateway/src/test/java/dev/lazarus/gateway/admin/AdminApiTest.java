package dev.lazarus.gateway.admin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.gateway.policy.Actor;
import dev.lazarus.gateway.policy.BackendPolicyState;
import dev.lazarus.gateway.policy.PolicyEngine;
import dev.lazarus.gateway.policy.PolicyState;
import dev.lazarus.gateway.testing.ScriptedBackend;
import dev.lazarus.gateway.resilience.HealthMonitor;
import dev.lazarus.gateway.routing.BackendRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The admin API on a running gateway: scripted backend {@code alpha} is a candidate in front of
 * the oracle {@code beta} for {@code test-model}. Each test starts from alpha CANDIDATE, beta ACTIVE.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "lazarus.admin.token=admin-secret",
        "lazarus.policy.backends.alpha.role=candidate",
        "lazarus.policy.gate.max-ttft=60s"})
@ActiveProfiles("test")
@AutoConfigureWebTestClient
class AdminApiTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Autowired
    WebTestClient client;

    @Autowired
    PolicyEngine engine;

    @Autowired
    BackendRegistry backends;

    @Autowired
    HealthMonitor monitor;

    @BeforeEach
    void alphaCandidateBetaActive() {
        BackendPolicyState alpha = engine.state("alpha").orElseThrow();
        if (alpha.state() == PolicyState.PROMOTED) {
            engine.rollback("alpha", Actor.OPERATOR, "test reset", java.util.Map.of());
        }
        if (engine.state("alpha").orElseThrow().state() != PolicyState.CANDIDATE) {
            engine.enable("alpha", Actor.OPERATOR, "test reset");
        }
        for (String id : List.of("alpha", "beta")) {
            if (engine.state(id).orElseThrow().draining()) {
                engine.drain(id, Actor.OPERATOR, false);
            }
        }
        if (engine.state("beta").orElseThrow().state() == PolicyState.DISABLED) {
            engine.enable("beta", Actor.OPERATOR, "test reset");
        }
        admin(HttpMethod.PUT, "/admin/routes/test-model", "{\"backends\":[\"alpha\",\"beta\"]}").expectStatus().isOk();
    }

    @Test
    void everyAdminPathNeedsTheAdminTokenNotAnApiKey() {
        for (String path : List.of("/admin/backends", "/admin/openapi", "/admin/events", "/admin/nothing-here")) {
            JsonNode none = error(client.get().uri(path).exchange().expectStatus().isUnauthorized()
                    .expectHeader().valueMatches("WWW-Authenticate", "Bearer.*"));
            assertThat(none.path("code").asString()).isEqualTo("invalid_api_key");
            assertThat(none.path("message").asString()).contains("admin token");
        }
        JsonNode apiKey = error(client.get().uri("/admin/backends").header("Authorization", "Bearer test-key-1")
                .exchange().expectStatus().isUnauthorized());
        assertThat(apiKey.path("message").asString()).isEqualTo("Incorrect admin token provided.");
        error(client.get().uri("/admin/backends").header("Authorization", "Basic admin-secret").exchange()
                .expectStatus().isUnauthorized());
        admin(HttpMethod.GET, "/admin/backends", null).expectStatus().isOk();
        // The admin token is not an API key either.
        client.get().uri("/v1/models").header("Authorization", "Bearer admin-secret").exchange()
                .expectStatus().isUnauthorized();
    }

    @Test
    void backendsShowRoleStateReasonHealthBreakerAndModels() {
        JsonNode list = body(admin(HttpMethod.GET, "/admin/backends", null).expectStatus().isOk());
        assertThat(list.path("object").asString()).isEqualTo("list");
        JsonNode alpha = find(list.path("data"), "alpha");
        assertThat(alpha.path("role").asString()).isEqualTo("CANDIDATE");
        assertThat(alpha.path("state").asString()).isEqualTo("CANDIDATE");
        assertThat(alpha.path("reason").asString()).isNotEmpty();
        assertThat(alpha.path("health").path("status").asString()).isEqualTo("UP");
        assertThat(alpha.path("models").values()).extracting(JsonNode::asString).contains("test-model")
                .doesNotContain("org/slashed-model");
        assertThat(alpha.path("draining").asBoolean()).isFalse();
        assertThat(alpha.has("in_flight")).isTrue();
        JsonNode beta = find(list.path("data"), "beta");
        assertThat(beta.path("role").asString()).isEqualTo("ORACLE");
        assertThat(beta.path("state").asString()).isEqualTo("ACTIVE");

        JsonNode one = body(admin(HttpMethod.GET, "/admin/backends/beta", null).expectStatus().isOk());
        assertThat(one.path("models").values()).extracting(JsonNode::asString)
                .contains("test-model", "org/slashed-model");
        JsonNode missing = error(admin(HttpMethod.GET, "/admin/backends/ghost", null).expectStatus().isNotFound());
        assertThat(missing.path("code").asString()).isEqualTo("backend_not_found");
    }

    @Test
    void aLoadingBackendShowsItsLoadProgressAndTimeLeft() {
        ScriptedBackend chatOnly = (ScriptedBackend) backends.find("chat-only").orElseThrow();
        try {
            chatOnly.setHealth(BackendHealth.loading("loading scripted (42 %)", 0.42, Duration.ofSeconds(21)));
            monitor.refresh().block(Duration.ofSeconds(5));
            JsonNode health = body(admin(HttpMethod.GET, "/admin/backends/chat-only", null).expectStatus().isOk())
                    .path("health");
            assertThat(health.path("status").asString()).isEqualTo("LOADING");
            assertThat(health.path("detail").asString()).isEqualTo("loading scripted (42 %)");
            assertThat(health.path("loading").path("percent").asInt()).isEqualTo(42);
            // 21 s for 42 %: the other 58 % at that pace
            assertThat(health.path("loading").path("eta_seconds").asLong()).isEqualTo(29);
            JsonNode list = body(admin(HttpMethod.GET, "/admin/backends", null).expectStatus().isOk());
            assertThat(find(list.path("data"), "chat-only").path("health").path("loading").path("percent").asInt())
                    .isEqualTo(42);
            assertThat(find(list.path("data"), "alpha").path("health").path("loading").isNull())
                    .as("nothing loading, no progress").isTrue();
        } finally {
            chatOnly.setHealth(BackendHealth.Status.UP);
            monitor.refresh().block(Duration.ofSeconds(5));
        }
        assertThat(body(admin(HttpMethod.GET, "/admin/backends/chat-only", null).expectStatus().isOk())
                .path("health").path("loading").isNull()).isTrue();
    }

    @Test
    void promoteRoutesToTheCandidateAndRollbackSendsTrafficToTheOracleAtOnce() {
        ScriptedBackend alpha = (ScriptedBackend) backends.find("alpha").orElseThrow();
        ScriptedBackend beta = (ScriptedBackend) backends.find("beta").orElseThrow();

        int alphaCalls = alpha.calls();
        chat();
        assertThat(alpha.calls()).as("a candidate gets no traffic").isEqualTo(alphaCalls);

        JsonNode promoted = body(admin(HttpMethod.POST, "/admin/backends/alpha/promote", "{\"reason\":\"benchmarked\"}")
                .expectStatus().isOk());
        assertThat(promoted.path("state").asString()).isEqualTo("PROMOTED");
        assertThat(promoted.path("reason").asString()).isEqualTo("benchmarked");
        chat();
        assertThat(alpha.calls()).isEqualTo(alphaCalls + 1);

        admin(HttpMethod.POST, "/admin/backends/alpha/rollback", null).expectStatus().isOk();
        int betaCalls = beta.calls();
        chat();
        assertThat(alpha.calls()).isEqualTo(alphaCalls + 1);
        assertThat(beta.calls()).isEqualTo(betaCalls + 1);

        JsonNode conflict = error(admin(HttpMethod.POST, "/admin/backends/alpha/promote", null)
                .expectStatus().isEqualTo(409));
        assertThat(conflict.path("code").asString()).isEqualTo("invalid_transition");
        assertThat(conflict.path("message").asString()).contains("ROLLED_BACK").contains("Re-arm");
        assertThat(body(admin(HttpMethod.POST, "/admin/backends/alpha/enable", null).expectStatus().isOk())
                .path("state").asString()).isEqualTo("CANDIDATE");

        JsonNode events = body(admin(HttpMethod.GET, "/admin/events?size=3", null).expectStatus().isOk());
        assertThat(events.path("data").values()).extracting(e -> e.path("action").asString())
                .containsExactly("enable", "rollback", "promote");
        assertThat(events.path("data").path(1).path("actor").asString()).isEqualTo("OPERATOR");
        assertThat(events.path("data").path(1).path("from").asString()).isEqualTo("PROMOTED");
    }

    @Test
    void illegalTransitionsAre409AndBadInput400WithParam() {
        error(admin(HttpMethod.POST, "/admin/backends/alpha/rollback", null).expectStatus().isEqualTo(409));
        error(admin(HttpMethod.POST, "/admin/backends/beta/promote", null).expectStatus().isEqualTo(409));
        error(admin(HttpMethod.POST, "/admin/backends/alpha/enable", null).expectStatus().isEqualTo(409));
        error(admin(HttpMethod.POST, "/admin/backends/alpha/undrain", null).expectStatus().isEqualTo(409));
        JsonNode reason = error(admin(HttpMethod.POST, "/admin/backends/alpha/promote", "{\"reason\":42}")
                .expectStatus().isBadRequest());
        assertThat(reason.path("param").asString()).isEqualTo("reason");
        error(admin(HttpMethod.POST, "/admin/backends/alpha/promote", "{not json").expectStatus().isBadRequest());
        error(admin(HttpMethod.GET, "/admin/backends/alpha/promote", null).expectStatus().isEqualTo(405));
        assertThat(engine.state("alpha").orElseThrow().state()).isEqualTo(PolicyState.CANDIDATE);
    }

    @Test
    void drainingTheOnlyServingBackendLeavesTheModelUnavailable() {
        admin(HttpMethod.POST, "/admin/backends/beta/drain", null).expectStatus().isOk();
        JsonNode error = error(client.post().uri("/v1/chat/completions").header("Authorization", "Bearer test-key-1")
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"model\":\"test-model\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")
                .exchange().expectStatus().isEqualTo(503));
        assertThat(error.path("code").asString()).isEqualTo("service_unavailable");
        admin(HttpMethod.POST, "/admin/backends/beta/undrain", null).expectStatus().isOk();
        chat();
    }

    /** The same rule as /v1: a body that is not JSON by its Content-Type is 415, a JSON body that does not parse 400. */
    @Test
    void contentTypesAreJudgedAsOnV1() {
        WebTestClient slow = client.mutate().responseTimeout(Duration.ofSeconds(60)).build();
        JsonNode text = error(slow.post().uri("/admin/backends/alpha/disable").header("Authorization", "Bearer admin-secret")
                .contentType(MediaType.TEXT_PLAIN).bodyValue("{\"reason\":\"x\"}").exchange()
                .expectStatus().isEqualTo(415));
        assertThat(text.path("type").asString()).isEqualTo("invalid_request_error");
        assertThat(text.path("code").asString()).isEqualTo("unsupported_media_type");
        JsonNode v1 = error(slow.post().uri("/v1/chat/completions").header("Authorization", "Bearer test-key-1")
                .contentType(MediaType.TEXT_PLAIN).bodyValue("{}").exchange().expectStatus().isEqualTo(415));
        assertThat(v1.path("code").asString()).isEqualTo(text.path("code").asString());
        error(slow.put().uri("/admin/routes/test-model").header("Authorization", "Bearer admin-secret")
                .contentType(MediaType.APPLICATION_FORM_URLENCODED).bodyValue("backends=alpha").exchange()
                .expectStatus().isEqualTo(415));
        error(slow.post().uri("/admin/benchmarks").header("Authorization", "Bearer admin-secret")
                .contentType(MediaType.APPLICATION_XML).bodyValue("{}").exchange().expectStatus().isEqualTo(415));
        assertThat(engine.state("alpha").orElseThrow().state()).as("nothing was done").isEqualTo(PolicyState.CANDIDATE);

        JsonNode malformed = error(admin(HttpMethod.POST, "/admin/backends/alpha/promote", "{not json")
                .expectStatus().isBadRequest());
        assertThat(malformed.path("type").asString()).isEqualTo("invalid_request_error");
        assertThat(malformed.path("message").asString()).startsWith("We could not parse the JSON body of your request");
        // JSON in another spelling, or no Content-Type with no body: accepted, as on /v1
        slow.post().uri("/admin/backends/beta/breaker/reset").header("Authorization", "Bearer admin-secret")
                .contentType(MediaType.parseMediaType("application/merge-patch+json")).bodyValue("{}").exchange()
                .expectStatus().isOk();
        slow.post().uri("/admin/backends/beta/breaker/reset").header("Authorization", "Bearer admin-secret").exchange()
                .expectStatus().isOk();
        // without the token, the token is what the caller hears about
        error(client.post().uri("/admin/backends/alpha/disable").contentType(MediaType.TEXT_PLAIN).bodyValue("x")
                .exchange().expectStatus().isUnauthorized());
    }

    @Test
    void breakerCanBeForcedOpenClosedAndReset() {
        JsonNode open = body(admin(HttpMethod.POST, "/admin/backends/beta/breaker/open", null).expectStatus().isOk());
        assertThat(open.path("breaker").path("state").asString()).isEqualTo("FORCED_OPEN");
        assertThat(body(admin(HttpMethod.POST, "/admin/backends/beta/breaker/close", null).expectStatus().isOk())
                .path("breaker").path("state").asString()).isEqualTo("CLOSED");
        JsonNode reset = body(admin(HttpMethod.POST, "/admin/backends/beta/breaker/reset", null).expectStatus().isOk());
        assertThat(reset.path("breaker").path("buffered_calls").asInt()).isZero();
        JsonNode event = body(admin(HttpMethod.GET, "/admin/events?size=1", null).expectStatus().isOk()).path("data").path(0);
        assertThat(event.path("action").asString()).isEqualTo("breaker-reset");
        error(admin(HttpMethod.POST, "/admin/backends/ghost/breaker/open", null).expectStatus().isNotFound());
    }

    @Test
    void routesCanBeChangedAtRunTimeAndAreValidated() {
        JsonNode routes = body(admin(HttpMethod.GET, "/admin/routes", null).expectStatus().isOk());
        JsonNode testModel = findBy(routes.path("data"), "model", "test-model");
        assertThat(testModel.path("plan").values()).extracting(JsonNode::asString).containsExactly("beta");

        JsonNode changed = body(admin(HttpMethod.PUT, "/admin/routes/test-model", "{\"backends\":[\"mapped\",\"beta\"]}")
                .expectStatus().isOk());
        assertThat(changed.path("overridden").asBoolean()).isTrue();
        assertThat(changed.path("plan").values()).extracting(JsonNode::asString).containsExactly("mapped", "beta");
        ScriptedBackend mapped = (ScriptedBackend) backends.find("mapped").orElseThrow();
        chat();
        assertThat(mapped.lastChat().model()).as("the backend's own model name").isEqualTo("inner-name");

        JsonNode slashed = body(admin(HttpMethod.PUT, "/admin/routes/org/slashed-model",
                "{\"backends\":[\"alpha\",\"beta\"]}").expectStatus().isOk());
        assertThat(slashed.path("model").asString()).isEqualTo("org/slashed-model");
        admin(HttpMethod.PUT, "/admin/routes/org/slashed-model", "{\"backends\":[\"beta\"]}").expectStatus().isOk();

        assertThat(error(admin(HttpMethod.PUT, "/admin/routes/test-model", "{\"backends\":[\"beta\",\"ghost\"]}")
                .expectStatus().isBadRequest()).path("param").asString()).isEqualTo("backends[1]");
        assertThat(error(admin(HttpMethod.PUT, "/admin/routes/test-model", "{\"backends\":[\"beta\",\"beta\"]}")
                .expectStatus().isBadRequest()).path("param").asString()).isEqualTo("backends[1]");
        assertThat(error(admin(HttpMethod.PUT, "/admin/routes/test-model", "{\"backends\":[]}")
                .expectStatus().isBadRequest()).path("param").asString()).isEqualTo("backends");
        assertThat(error(admin(HttpMethod.PUT, "/admin/routes/test-model", "{\"backends\":[1]}")
                .expectStatus().isBadRequest()).path("param").asString()).isEqualTo("backends[0]");
        assertThat(error(admin(HttpMethod.PUT, "/admin/routes/test-model", "[]")
                .expectStatus().isBadRequest()).path("type").asString()).isEqualTo("invalid_request_error");
        assertThat(error(admin(HttpMethod.PUT, "/admin/routes/no-such-model", "{\"backends\":[\"beta\"]}")
                .expectStatus().isNotFound()).path("code").asString()).isEqualTo("model_not_found");
    }

    @Test
    void eventsArePagedAndValidated() {
        engine.drain("beta", Actor.OPERATOR, true);
        engine.drain("beta", Actor.OPERATOR, false);
        JsonNode first = body(admin(HttpMethod.GET, "/admin/events?page=0&size=2", null).expectStatus().isOk());
        JsonNode second = body(admin(HttpMethod.GET, "/admin/events?page=1&size=2", null).expectStatus().isOk());
        assertThat(first.path("data").size()).isEqualTo(2);
        assertThat(first.path("data").path(0).path("action").asString()).isEqualTo("undrain");
        long newest = first.path("data").path(0).path("seq").asLong();
        assertThat(first.path("total").asLong()).isEqualTo(newest);
        assertThat(second.path("data").path(0).path("seq").asLong()).isEqualTo(newest - 2);
        assertThat(error(admin(HttpMethod.GET, "/admin/events?size=0", null).expectStatus().isBadRequest())
                .path("param").asString()).isEqualTo("size");
        assertThat(error(admin(HttpMethod.GET, "/admin/events?page=abc", null).expectStatus().isBadRequest())
                .path("param").asString()).isEqualTo("page");
    }

    @Test
    void hardwareShowsTheProbeAndEachCandidatesPreflight() {
        JsonNode hw = body(admin(HttpMethod.GET, "/admin/hardware", null).expectStatus().isOk());
        assertThat(hw.path("logical_cpus").asInt()).isPositive();
        assertThat(hw.path("ram_bytes").asLong()).isPositive();
        assertThat(hw.path("preflight").path("alpha").path("passed").asBoolean()).isTrue();
        assertThat(hw.path("preflight").has("beta")).isFalse();
    }

    @Test
    void benchmarkJobRunsCandidateAndOracleAndGivesAVerdict() throws Exception {
        // the oracle made slower than the candidate: the speed rule is relative to it
        JsonNode accepted = body(admin(HttpMethod.POST, "/admin/benchmarks", """
                {"candidate":"alpha","runs":2,"extra":{"script":{"beta":{"delay_ms":20}}}}""")
                .expectStatus().isAccepted());
        assertThat(accepted.path("status").asString()).isEqualTo("running");
        assertThat(accepted.path("oracle").asString()).isEqualTo("beta");
        assertThat(accepted.path("percent").asInt()).isZero();
        JsonNode job = awaitJob(accepted.path("id").asString());

        assertThat(job.path("status").asString()).isEqualTo("done");
        assertThat(job.path("verdict").asString()).isEqualTo("GO");
        assertThat(job.path("percent").asInt()).isEqualTo(100);
        assertThat(job.path("eta_seconds").isNull()).as("ended: no ETA").isTrue();
        JsonNode listed = body(admin(HttpMethod.GET, "/admin/benchmarks", null).expectStatus().isOk()).path("data");
        assertThat(listed.findValuesAsString("id")).contains(accepted.path("id").asString());
        assertThat(job.path("promoted").asBoolean()).as("auto-promote is off").isFalse();
        JsonNode candidate = job.path("candidate_figures");
        assertThat(candidate.path("success_rate").asDouble()).isEqualTo(1.0);
        assertThat(candidate.path("prompts").size()).isEqualTo(3);
        assertThat(candidate.path("prompts").path(0).path("prompt").asString())
                .isEqualTo("Explain quantum entanglement in simple terms.");
        assertThat(candidate.path("prompts").path(0).path("runs").size()).isEqualTo(2);
        assertThat(candidate.path("prompts").path(0).path("runs").path(0).path("completion_tokens").asInt()).isEqualTo(3);
        assertThat(candidate.path("tokens_per_second").path("n").asInt()).isEqualTo(6);
        assertThat(candidate.path("tokens_per_second").has("stdev")).isTrue();
        assertThat(job.path("oracle_figures").path("backend_id").asString()).isEqualTo("beta");
        assertThat(job.path("reasons").path(0).asString()).contains("x the oracle's")
                .endsWith("(relative rule: the oracle was measured in this job)");
        // scripted backends report no logprobs: not measured, which does not block GO by default
        assertThat(job.path("agreement").path("measured").asBoolean()).isFalse();
        assertThat(job.path("agreement").path("reason").asString())
                .isEqualTo("the candidate 'alpha' does not report logprobs");
        assertThat(job.path("reasons").toString()).contains("agreement with the oracle not measured");
        ScriptedBackend alpha = (ScriptedBackend) backends.find("alpha").orElseThrow();
        assertThat(alpha.lastChat().maxTokens()).isEqualTo(256);
        assertThat(engine.state("alpha").orElseThrow().state()).isEqualTo(PolicyState.CANDIDATE);
        JsonNode gateEvent = body(admin(HttpMethod.GET, "/admin/events?size=1", null).expectStatus().isOk())
                .path("data").path(0);
        assertThat(gateEvent.path("actor").asString()).isEqualTo("GATE");
        assertThat(gateEvent.path("reason").asString()).startsWith("verdict GO");
    }

    @Test
    void aCandidateSlowerThanTheOracleIsNoGoThoughItBeatsTheAbsoluteThreshold() throws Exception {
        // issue 11: a candidate at 0.22x the oracle was promoted because it beat 12 tok/s
        JsonNode accepted = body(admin(HttpMethod.POST, "/admin/benchmarks", """
                {"candidate":"alpha","runs":1,"extra":{"script":{"alpha":{"delay_ms":25},"beta":{"delay_ms":2}}}}""")
                .expectStatus().isAccepted());
        JsonNode job = awaitJob(accepted.path("id").asString());
        assertThat(job.path("candidate_figures").path("tokens_per_second").path("mean").asDouble())
                .as("fast enough for the absolute rule").isGreaterThan(12);
        assertThat(job.path("verdict").asString()).isEqualTo("NO_GO");
        assertThat(job.path("reasons").path(0).asString()).contains("x the oracle's")
                .contains("under the 0.75x NO-GO ratio (relative rule: the oracle was measured in this job)");
        assertThat(engine.state("alpha").orElseThrow().state()).isEqualTo(PolicyState.CANDIDATE);
    }

    @Test
    void failingCandidateIsNoGo() throws Exception {
        JsonNode accepted = body(admin(HttpMethod.POST, "/admin/benchmarks", """
                {"candidate":"alpha","runs":1,"extra":{"script":{"alpha":{"fail":"INTERNAL"}}}}""")
                .expectStatus().isAccepted());
        JsonNode job = awaitJob(accepted.path("id").asString());
        assertThat(job.path("verdict").asString()).isEqualTo("NO_GO");
        assertThat(job.path("candidate_figures").path("success_rate").asDouble()).isZero();
        assertThat(job.path("candidate_figures").path("prompts").path(0).path("runs").path(0).path("error").asString())
                .contains("scripted INTERNAL");
        assertThat(job.path("oracle_figures").path("success_rate").asDouble()).isEqualTo(1.0);
        assertThat(job.path("reasons").path(0).asString()).contains("success rate 0%");
    }

    @Test
    void benchmarkRequestsAreValidated() {
        assertThat(error(admin(HttpMethod.POST, "/admin/benchmarks", "{}").expectStatus().isBadRequest())
                .path("param").asString()).isEqualTo("candidate");
        assertThat(error(admin(HttpMethod.POST, "/admin/benchmarks", "{\"candidate\":\"ghost\"}")
                .expectStatus().isBadRequest()).path("param").asString()).isEqualTo("candidate");
        assertThat(error(admin(HttpMethod.POST, "/admin/benchmarks", "{\"candidate\":\"beta\"}")
                .expectStatus().isBadRequest()).path("message").asString()).contains("oracle");
        for (String runs : List.of("0", "51", "1.5", "\"3\"")) {
            JsonNode e = error(admin(HttpMethod.POST, "/admin/benchmarks", "{\"candidate\":\"alpha\",\"runs\":" + runs + "}")
                    .expectStatus().isBadRequest());
            assertThat(e.path("param").asString()).isEqualTo("runs");
            assertThat(e.path("code").asString()).isEqualTo("invalid_value");
        }
        assertThat(error(admin(HttpMethod.POST, "/admin/benchmarks", "{\"candidate\":\"alpha\",\"extra\":[]}")
                .expectStatus().isBadRequest()).path("param").asString()).isEqualTo("extra");
        engine.disable("alpha", Actor.OPERATOR, "for the test");
        error(admin(HttpMethod.POST, "/admin/benchmarks", "{\"candidate\":\"alpha\"}").expectStatus().isEqualTo(409));
        error(admin(HttpMethod.GET, "/admin/benchmarks/nope", null).expectStatus().isNotFound());
    }

    @Test
    void openApiDocumentDescribesTheAdminApiOnly() {
        JsonNode doc = body(admin(HttpMethod.GET, "/admin/openapi", null).expectStatus().isOk());
        assertThat(doc.path("openapi").asString()).startsWith("3.");
        assertThat(doc.path("info").path("title").asString()).isEqualTo("Lazarus admin API");
        List<String> paths = new ArrayList<>(doc.path("paths").propertyNames());
        assertThat(paths).contains("/admin/backends", "/admin/backends/{id}", "/admin/backends/{id}/promote",
                "/admin/backends/{id}/rollback", "/admin/backends/{id}/enable", "/admin/backends/{id}/disable",
                "/admin/backends/{id}/drain", "/admin/backends/{id}/undrain", "/admin/backends/{id}/breaker/open",
                "/admin/backends/{id}/breaker/close", "/admin/backends/{id}/breaker/reset", "/admin/benchmarks",
                "/admin/benchmarks/{id}", "/admin/routes", "/admin/events", "/admin/hardware");
        assertThat(paths).anySatisfy(p -> assertThat(p).startsWith("/admin/routes/{"));
        assertThat(paths).allSatisfy(p -> assertThat(p).startsWith("/admin/"));
        assertThat(doc.path("components").path("securitySchemes").path("adminToken").path("scheme").asString())
                .isEqualTo("bearer");
        String yaml = admin(HttpMethod.GET, "/admin/openapi.yaml", null).expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
        assertThat(yaml).contains("openapi: 3.").contains("/admin/benchmarks:");
    }

    private JsonNode awaitJob(String id) throws InterruptedException {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(60));
        while (Instant.now().isBefore(deadline)) {
            JsonNode job = body(admin(HttpMethod.GET, "/admin/benchmarks/" + id, null).expectStatus().isOk());
            if (!job.path("status").asString().equals("running")) {
                return job;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("benchmark job " + id + " did not finish within 60 s");
    }

    @Test
    void expertPlacementIsShownAndRebalancedThroughTheBackend() {
        JsonNode map = body(admin(HttpMethod.GET, "/admin/backends/beta/placement", null).expectStatus().isOk());
        assertThat(map.get("strategy").asString()).isEqualTo("dynamic");
        assertThat(map.at("/tiers/0/tier").asString()).isEqualTo("ram");
        assertThat(map.at("/tiers/0/byte_hit_rate").asDouble()).isEqualTo(0.25);
        assertThat(map.at("/layers/0/tiers").size()).isEqualTo(4);
        long before = map.get("rebalances").asLong();

        JsonNode after = body(admin(HttpMethod.POST, "/admin/backends/beta/placement/rebalance", null)
                .expectStatus().isOk());
        assertThat(after.get("rebalances").asLong()).isEqualTo(before + 1);
        JsonNode events = body(admin(HttpMethod.GET, "/admin/events?size=5", null).expectStatus().isOk());
        assertThat(events.toString()).contains("rebalance-experts");

        JsonNode none = error(admin(HttpMethod.GET, "/admin/backends/alpha/placement", null)
                .expectStatus().isEqualTo(409));
        assertThat(none.get("code").asString()).isEqualTo("placement_unavailable");
        JsonNode unknown = error(admin(HttpMethod.POST, "/admin/backends/nope/placement/rebalance", null)
                .expectStatus().isNotFound());
        assertThat(unknown.get("code").asString()).isEqualTo("backend_not_found");
    }

    private void chat() {
        client.post().uri("/v1/chat/completions").header("Authorization", "Bearer test-key-1")
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"model\":\"test-model\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")
                .exchange().expectStatus().isOk();
    }

    private WebTestClient.ResponseSpec admin(HttpMethod method, String path, String body) {
        // Generous: the first OpenAPI document is generated on demand, slowly on a busy CI machine.
        WebTestClient.RequestBodySpec spec = client.mutate().responseTimeout(Duration.ofSeconds(60)).build()
                .method(method).uri(path)
                .header("Authorization", "Bearer admin-secret");
        if (body != null) {
            return spec.contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange();
        }
        return spec.exchange();
    }

    private static JsonNode body(WebTestClient.ResponseSpec spec) {
        return JSON.readTree(spec.expectBody(String.class).returnResult().getResponseBody());
    }

    /** The OpenAI error object, checking the envelope's four fields. */
    private static JsonNode error(WebTestClient.ResponseSpec spec) {
        JsonNode error = body(spec).path("error");
        assertThat(error.isObject()).isTrue();
        assertThat(error.has("message") && error.has("type") && error.has("param") && error.has("code")).isTrue();
        return error;
    }

    private static JsonNode find(JsonNode array, String id) {
        return findBy(array, "id", id);
    }

    private static JsonNode findBy(JsonNode array, String field, String value) {
        for (JsonNode node : array) {
            if (node.path(field).asString().equals(value)) {
                return node;
            }
        }
        throw new AssertionError("no " + field + "=" + value + " in " + array);
    }
}
