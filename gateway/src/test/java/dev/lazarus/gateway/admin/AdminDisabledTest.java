package dev.lazarus.gateway.admin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.testing.GatewayTestSupport;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/** The shared test context has no admin token: the admin API is off, in OpenAI error format. */
class AdminDisabledTest extends GatewayTestSupport {

    @Test
    void adminApiWithoutConfiguredTokenAnswers403EvenWithAKey() {
        for (String path : new String[] {"/admin/backends", "/admin/openapi", "/admin"}) {
            String body = client.get().uri(path).header("Authorization", "Bearer " + API_KEY).exchange()
                    .expectStatus().isForbidden()
                    .expectBody(String.class).returnResult().getResponseBody();
            JsonNode error = json(body).path("error");
            assertThat(error.path("code").asString()).isEqualTo("admin_disabled");
            assertThat(error.path("type").asString()).isEqualTo("invalid_request_error");
            assertThat(error.path("message").asString()).contains("lazarus.admin.token");
        }
    }

    @Test
    void chatStillRoutesThroughThePolicyPlannerWithEveryBackendAnOracle() {
        String body = post("/v1/chat/completions", """
                {"model":"test-model","messages":[{"role":"user","content":"hi"}]}""")
                .expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
        assertThat(json(body).path("choices").path(0).path("message").path("content").asString())
                .isEqualTo("Hello, world");
    }
}
