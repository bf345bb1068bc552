package dev.lazarus.gateway.api;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.reactive.server.WebTestClient;

/** A second, separate context: no keys configured, so /v1 is open. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "lazarus.security.api-keys=")
@ActiveProfiles("test")
@AutoConfigureWebTestClient
class AuthDisabledTest {

    @Autowired
    WebTestClient client;

    @Test
    void withoutConfiguredKeysNoAuthorizationIsNeeded() {
        client.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}]}")
                .exchange()
                .expectStatus().isOk()
                .expectBody().jsonPath("$.choices[0].message.content").isEqualTo("Hello, world");
    }
}
