package dev.lazarus.gateway.api;

import dev.lazarus.gateway.testing.GatewayTestSupport;
import java.net.URI;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.http.MediaType;

class AuthTest extends GatewayTestSupport {

    private static final String BODY = "{\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}]}";

    @Test
    void missingKeyIs401() {
        client.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON).bodyValue(BODY).exchange()
                .expectStatus().isUnauthorized()
                .expectHeader().valueEquals("WWW-Authenticate", "Bearer")
                .expectBody()
                .jsonPath("$.error.code").isEqualTo("invalid_api_key")
                .jsonPath("$.error.type").isEqualTo("invalid_request_error");
    }

    @Test
    void wrongKeyIs401AndTheKeyIsNotEchoed() {
        client.get().uri("/v1/models").header("Authorization", "Bearer test-key-1x").exchange()
                .expectStatus().isUnauthorized()
                .expectBody(String.class).value(body -> org.assertj.core.api.Assertions.assertThat(body)
                        .contains("invalid_api_key").doesNotContain("test-key"));
        client.get().uri("/v1/models").header("Authorization", "Basic dGVzdA==").exchange()
                .expectStatus().isUnauthorized();
    }

    @Test
    void everyConfiguredKeyIsAccepted() {
        client.get().uri("/v1/models").header("Authorization", "Bearer test-key-1").exchange().expectStatus().isOk();
        client.get().uri("/v1/models").header("Authorization", "bearer test-key-2").exchange().expectStatus().isOk();
    }

    @Test
    void unknownV1PathsNeedAKeyTooButHealthIsOpen() {
        client.get().uri("/v1/whatever").exchange().expectStatus().isUnauthorized();
        client.get().uri("/actuator/health/liveness").exchange().expectStatus().isOk();
    }

    /** The router decodes segments and drops ;matrix parameters: the key check must see the same path. */
    @ParameterizedTest
    @ValueSource(strings = {"/v1;x=1/models", "/%761/models", "/v1/%6dodels", "/v1;/chat/completions"})
    void pathsSpelledDifferentlyNeedAKeyToo(String rawPath) {
        client.get().uri(URI.create("http://localhost:" + port + rawPath)).exchange()
                .expectStatus().isUnauthorized()
                .expectBody().jsonPath("$.error.code").isEqualTo("invalid_api_key");
    }
}
