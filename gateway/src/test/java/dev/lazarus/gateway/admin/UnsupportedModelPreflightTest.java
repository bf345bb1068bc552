package dev.lazarus.gateway.admin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.policy.PolicyEngine;
import dev.lazarus.gateway.policy.PolicyState;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Issue 18 (4): a kt-native candidate whose GGUF needs a tensor type the engine lacks stays {@code DISABLED} with the
 * type and its tensors named, its health says the same, and {@code GET /admin/backends/{id}} shows what the file needs.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "lazarus.admin.token=admin-secret",
        "lazarus.policy.store-path=",
        "lazarus.policy.backends.kt.role=candidate",
        // lists bind from one property source: these replace the test profile's backends and models whole
        "lazarus.backends[0].id=oracle", "lazarus.backends[0].kind=scripted",
        "lazarus.backends[1].id=kt", "lazarus.backends[1].kind=kt-native",
        "lazarus.backends[1].settings.threads=1", "lazarus.backends[1].settings.model-name=iq2",
        "lazarus.backends[1].settings.model=${test.unsupported-model}",
        "lazarus.models[0].name=iq2", "lazarus.models[0].backends[0]=kt", "lazarus.models[0].backends[1]=oracle"})
@ActiveProfiles("test")
@AutoConfigureWebTestClient
class UnsupportedModelPreflightTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String REASON = "unsupported tensor types: TQ1_0 (blk.*.ffn_down_exps.weight, 4 tensors)";

    @Autowired
    WebTestClient client;

    @Autowired
    PolicyEngine engine;

    /** A qwen3moe header whose routed down-projections are TQ1_0 (the engine has no kernel for it). */
    @DynamicPropertySource
    static void model(DynamicPropertyRegistry registry) {
        try {
            Path path = Files.createTempFile("lazarus-tq1-", ".gguf");
            path.toFile().deleteOnExit();
            GgufWriter w = new GgufWriter().putString("general.architecture", "qwen3moe");
            w.addTensor("token_embd.weight", new float[256 * 4], new long[] {256, 4}, GgmlType.F32);
            for (int layer = 0; layer < 4; layer++) {
                w.addTensor("blk." + layer + ".ffn_down_exps.weight", GgmlType.TQ1_0, new long[] {256, 2, 4},
                        new byte[(int) GgmlType.TQ1_0.bytesFor(256 * 2 * 4)]);
            }
            w.write(path);
            registry.add("test.unsupported-model", path::toString);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void theCandidateStaysDisabledWithTheTypesNamedAndTheAdminViewShowsWhatTheFileNeeds() {
        var state = engine.state("kt").orElseThrow();
        assertThat(state.state()).isEqualTo(PolicyState.DISABLED);
        assertThat(state.reason()).contains(REASON);

        JsonNode view = JSON.readTree(client.get().uri("/admin/backends/kt").header("Authorization", "Bearer admin-secret")
                .exchange().expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody());
        assertThat(view.path("state").asString()).isEqualTo("DISABLED");
        assertThat(view.path("reason").asString()).contains(REASON);
        JsonNode needs = view.path("needs");
        assertThat(needs.path("architecture").asString()).isEqualTo("qwen3moe");
        assertThat(needs.path("tensor_types").path("TQ1_0").asInt()).isEqualTo(4);
        assertThat(needs.path("tensor_types").path("F32").asInt()).isEqualTo(1);
        assertThat(needs.path("unsupported").get(0).asString()).isEqualTo(REASON);

        client.post().uri("/admin/backends/kt/enable").header("Authorization", "Bearer admin-secret")
                .exchange().expectStatus().isEqualTo(409).expectBody(String.class)
                .value(body -> assertThat(body).contains("preflight_failed").contains(REASON));
    }
}
