package dev.lazarus.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.testing.GatewayTestSupport;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.TestPropertySource;

/** {@code lazarus.routing.response-model: requested}: responses name the model the client asked for. */
@TestPropertySource(properties = "lazarus.routing.response-model=requested")
class RequestedResponseModelTest extends GatewayTestSupport {

    @Test
    void theRequestedNameIsKept() {
        String body = post("/v1/chat/completions",
                "{\"model\": \"mapped-model\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}")
                .expectStatus().isOk().expectHeader().valueEquals(OpenAiController.SERVED_BY_HEADER, "mapped")
                .expectBody(String.class).returnResult().getResponseBody();
        assertThat(json(body).get("model").asString()).isEqualTo("mapped-model");
    }
}
