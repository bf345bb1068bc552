package dev.lazarus.gateway.realserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.backend.api.InferenceBackend;
import dev.lazarus.gateway.routing.BackendRegistry;
import dev.lazarus.kt.synthetic.SyntheticModels;
import dev.lazarus.kt.testsupport.LlamaServerProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The decision gate's agreement with the oracle, end to end: a real llama-server is the oracle on
 * the generated tiny llama; kt-native on the same file is a candidate that computes the same thing,
 * kt-native on the same architecture with other weights (another seed) one that computes something
 * else. And the failure KTransformers users meet: on a tiny qwen3moe (8 experts, 2 per token) with
 * llama-server as the oracle, kt-native on the same weights routing each token to 1 expert. Speed is
 * taken out of the verdict (ratios 0) so that agreement alone decides.
 */
@Tag("llama-server")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "lazarus.admin.token=admin-secret",
        "lazarus.policy.store-path=",
        "lazarus.policy.backends.twin.role=candidate",
        "lazarus.policy.backends.stranger.role=candidate",
        "lazarus.policy.backends.one-expert.role=candidate",
        "lazarus.policy.gate.go-oracle-ratio=0",
        "lazarus.policy.gate.hold-oracle-ratio=0",
        "lazarus.policy.gate.max-ttft=60s",
        "lazarus.policy.gate.max-tokens=8"})
@AutoConfigureWebTestClient(timeout = "PT2M")
class GateAgreementRealServerTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        Path dir = tempDir();
        LlamaServerProcess oracle = RealLlamaServers.start();
        RealLlamaServers.backend(registry, 0, "llama", oracle.url().toString());
        ktNative(registry, 1, "twin", RealLlamaServers.model(), "tiny");
        ktNative(registry, 2, "stranger", SyntheticModels.write(SyntheticModels.tinyLlama().withSeed(2),
                dir.resolve("tiny-llama-seed2.gguf")), "tiny");
        RealLlamaServers.route(registry, 0, "tiny", "twin", "stranger", "llama");

        SyntheticModels.Spec moe = SyntheticModels.tinyQwen3Moe();
        LlamaServerProcess moeOracle = RealLlamaServers.start(SyntheticModels.write(moe, dir.resolve("moe.gguf")));
        RealLlamaServers.backend(registry, 3, "llama-moe", moeOracle.url().toString());
        ktNative(registry, 4, "one-expert", SyntheticModels.write(withOneExpertPerToken(moe),
                dir.resolve("moe-one-expert.gguf")), "tiny-moe");
        RealLlamaServers.route(registry, 1, "tiny-moe", "one-expert", "llama-moe");
    }

    private static void ktNative(DynamicPropertyRegistry registry, int index, String id, Path model, String name) {
        String prefix = "lazarus.backends[" + index + "].";
        registry.add(prefix + "id", () -> id);
        registry.add(prefix + "kind", () -> "kt-native");
        registry.add(prefix + "settings.model", model::toString);
        registry.add(prefix + "settings.model-name", () -> name);
        registry.add(prefix + "settings.threads", () -> "1");
        registry.add(prefix + "settings.context-size", () -> Integer.toString(RealLlamaServers.CONTEXT));
    }

    /** The same weights (seed and shapes), each token routed to 1 expert instead of the model's 2. */
    private static SyntheticModels.Spec withOneExpertPerToken(SyntheticModels.Spec s) {
        SyntheticModels.Moe m = s.moe();
        return new SyntheticModels.Spec(s.name(), s.arch(), s.weightType(), s.seed(), s.layers(), s.dim(), s.heads(),
                s.kvHeads(), s.headDim(), s.ffn(), SyntheticModels.Moe.softmax(m.experts(), 1, m.expertFfn()), s.mla(),
                s.ropeTheta(), s.yarn(), s.contextLength(), s.rmsEps(), s.tiedEmbeddings());
    }

    private static Path tempDir() {
        try {
            return Files.createTempDirectory("lazarus-gate-agreement");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @AfterAll
    static void stopServers() {
        RealLlamaServers.stopAll();
    }

    @Autowired
    WebTestClient client;

    @Autowired
    BackendRegistry backends;

    @BeforeEach
    void candidatesLoaded() throws InterruptedException {
        for (String id : new String[] {"twin", "stranger", "one-expert"}) {
            InferenceBackend backend = backends.find(id).orElseThrow();
            Instant deadline = Instant.now().plus(Duration.ofSeconds(60));
            while (backend.health().block().status() != BackendHealth.Status.UP) {
                assertThat(Instant.now()).as(id + " loads its model").isBefore(deadline);
                Thread.sleep(50);
            }
        }
    }

    @Test
    void aCandidateComputingWhatTheOracleComputesAgreesAndIsGo() throws InterruptedException {
        JsonNode job = benchmark("twin");

        JsonNode agreement = job.path("agreement");
        assertThat(agreement.path("measured").asBoolean()).as(agreement.toString()).isTrue();
        assertThat(agreement.path("positions").asInt()).isEqualTo(3 * 16);
        assertThat(agreement.path("top1_agreement").asDouble()).isEqualTo(1.0);
        assertThat(agreement.path("mean_abs_logprob_delta").asDouble()).isLessThan(1e-3);
        assertThat(agreement.has("first_divergence")).isFalse();
        assertThat(job.path("verdict").asString()).as(job.toString()).isEqualTo("GO");
        assertThat(job.path("reasons").toString()).contains("agreement with the oracle 100.0% top-1 over 48 positions");
    }

    @Test
    void aCandidateComputingSomethingElseIsNoGoForItsAgreement() throws InterruptedException {
        JsonNode job = benchmark("stranger");

        JsonNode agreement = job.path("agreement");
        assertThat(agreement.path("measured").asBoolean()).as(agreement.toString()).isTrue();
        assertThat(agreement.path("top1_agreement").asDouble()).isLessThan(0.5);
        assertThat(agreement.path("first_divergence").asInt()).isZero();
        assertThat(job.path("verdict").asString()).isEqualTo("NO_GO");
        assertThat(job.path("reasons")).hasSize(1);
        assertThat(job.path("reasons").path(0).asString()).startsWith("agreement with the oracle ")
                .contains("is under the floor of 90.0%");
        // the oracle's path does not depend on the candidate: the same text in both jobs
        assertThat(agreement.path("prompts").path(0).path("oracle_text").asString())
                .isEqualTo(benchmark("twin").path("agreement").path("prompts").path(0).path("oracle_text").asString());
    }

    @Test
    void aCandidateRoutingToFewerExpertsThanTheModelIsNoGoForItsAgreement() throws InterruptedException {
        JsonNode job = benchmark("one-expert", "llama-moe");

        JsonNode agreement = job.path("agreement");
        assertThat(agreement.path("measured").asBoolean()).as(agreement.toString()).isTrue();
        assertThat(agreement.path("top1_agreement").asDouble()).as(agreement.toString()).isLessThan(0.9);
        assertThat(job.path("verdict").asString()).isEqualTo("NO_GO");
        assertThat(job.path("reasons").path(0).asString()).startsWith("agreement with the oracle ")
                .contains("is under the floor of 90.0%");
    }

    private JsonNode benchmark(String candidate) throws InterruptedException {
        return benchmark(candidate, "llama");
    }

    private JsonNode benchmark(String candidate, String expectedOracle) throws InterruptedException {
        JsonNode accepted = body(client.post().uri("/admin/benchmarks").header("Authorization", "Bearer admin-secret")
                .contentType(MediaType.APPLICATION_JSON).bodyValue("{\"candidate\":\"" + candidate + "\",\"runs\":1}")
                .exchange().expectStatus().isAccepted());
        assertThat(accepted.path("oracle").asString()).isEqualTo(expectedOracle);
        Instant deadline = Instant.now().plus(Duration.ofMinutes(3));
        while (Instant.now().isBefore(deadline)) {
            JsonNode job = body(client.get().uri("/admin/benchmarks/" + accepted.path("id").asString())
                    .header("Authorization", "Bearer admin-secret").exchange().expectStatus().isOk());
            if (!job.path("status").asString().equals("running")) {
                assertThat(job.path("status").asString()).as(job.toString()).isEqualTo("done");
                return job;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("benchmark of " + candidate + " did not finish within 3 minutes");
    }

    private static JsonNode body(WebTestClient.ResponseSpec spec) {
        return JSON.readTree(spec.expectBody(String.class).returnResult().getResponseBody());
    }
}
