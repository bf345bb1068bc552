package dev.lazarus.gateway.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Issue 17, finding 5: anonymous health is the status only, every detail is behind the admin token;
 * paths with dot segments are 404s, not 500s; every actuator error has a JSON (OpenAI) body; an
 * operator who exposes {@code env} and {@code configprops} with values shown still sees no secret:
 * not under its own name, not in the variable a {@code ${...}} placeholder read, not on the command line.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "lazarus.admin.token=" + ActuatorHardeningTest.ADMIN_TOKEN,
        "LAZARUS_TEST_API_KEY=" + ActuatorHardeningTest.API_KEY,
        "lazarus.security.api-keys[0]=${LAZARUS_TEST_API_KEY}",
        "UPSTREAM_TOKEN_FROM_ENV=" + ActuatorHardeningTest.UPSTREAM_KEY,
        "lazarus.backends[0].id=alpha",
        "lazarus.backends[0].kind=scripted",
        "lazarus.backends[0].settings.api-key=${UPSTREAM_TOKEN_FROM_ENV}",
        "lazarus.models[0].name=m",
        "lazarus.models[0].backends[0]=alpha",
        "management.endpoints.web.exposure.include=health,env,configprops",
        "management.endpoint.env.show-values=always",
        "management.endpoint.configprops.show-values=always"},
        args = "--lazarus.admin.token=" + ActuatorHardeningTest.ADMIN_TOKEN)
@ActiveProfiles("test")
@AutoConfigureWebTestClient
class ActuatorHardeningTest {

    static final String ADMIN_TOKEN = "actuator-admin-9f3e2a71";
    static final String API_KEY = "actuator-api-key-5d1c88";
    static final String UPSTREAM_KEY = "actuator-upstream-2b7e44";
    private static final String COMMAND = System.getProperty("sun.java.command");

    static {
        // How the gateway is often started: the key on the command line, which the JVM shows in a property.
        System.setProperty("sun.java.command", "dev.lazarus.gateway.LazarusGatewayApplication "
                + "--lazarus.security.api-keys[0]=" + API_KEY);
    }

    @AfterAll
    static void restoreCommand() {
        if (COMMAND == null) {
            System.clearProperty("sun.java.command");
        } else {
            System.setProperty("sun.java.command", COMMAND);
        }
    }

    @Autowired
    WebTestClient client;

    @LocalServerPort
    int port;

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Test
    void anonymousHealthIsTheStatusOnly() {
        JsonNode health = get("/actuator/health", null, 200);
        assertThat(health.path("status").asString()).isEqualTo("UP");
        assertThat(health.has("components")).isFalse();
        assertThat(health.has("details")).isFalse();
        JsonNode readiness = get("/actuator/health/readiness", null, 200);
        assertThat(readiness.has("components")).isFalse();
        // a component path tells an anonymous caller nothing either, in an OpenAI error
        assertThat(get("/actuator/health/backends", null, 404).path("error").path("code").asString())
                .isEqualTo("unknown_url");
    }

    @Test
    void theAdminTokenShowsEveryDetail() {
        JsonNode details = get("/actuator/health/details", ADMIN_TOKEN, 200);
        assertThat(details.path("components").path("backends").path("components").path("alpha").path("status")
                .asString()).isEqualTo("UP");
        assertThat(details.path("components").path("routes").path("details").path("m").asString()).isEqualTo("UP");
        assertThat(get("/actuator/health/details/backends", ADMIN_TOKEN, 200).has("components")).isTrue();
        assertThat(get("/actuator/health/details", null, 401).path("error").path("code").asString())
                .isEqualTo("invalid_api_key");
        // no spelling of the path reaches the details without the token
        for (String path : new String[] {"/actuator/health/details",
                "/actuator/health/details/backends", "/actuator/health/details;x=1", "/actuator/health//details",
                "/actuator//health/details/"}) {
            assertThat(client.get().uri(URI.create("http://127.0.0.1:" + port + path)).exchange().returnResult(String.class)
                    .getStatus().value()).as(path).isIn(401, 404);
            assertThat(client.get().uri(URI.create("http://127.0.0.1:" + port + path)).header("Authorization",
                    "Bearer " + API_KEY).exchange().returnResult(String.class).getStatus().value()).as(path).isIn(401, 404);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"/actuator/health/x/..", "/actuator/health/%2e%2e/env", "/actuator/health/./details",
            "/actuator/health/x/%2E%2E", "/actuator/health/x%2f..", "/actuator/health/",
            "/actuator/health/details/..", "/actuator/env/..%5cx"})
    void dotSegmentsAreNotFoundNotAServerError(String path) {
        JsonNode error = get(path, ADMIN_TOKEN, 404).path("error");
        assertThat(error.path("type").asString()).isEqualTo("invalid_request_error");
        assertThat(error.path("code").asString()).isEqualTo("unknown_url");
    }

    @ParameterizedTest
    @ValueSource(strings = {"/actuator/health/details/no-such-component", "/actuator/env/no.such.property",
            "/actuator/configprops/no.such.prefix", "/actuator/nothing-here"})
    void actuatorErrorsHaveAJsonBody(String path) {
        JsonNode error = get(path, ADMIN_TOKEN, 404).path("error");
        assertThat(error.path("message").asString()).isNotBlank();
        assertThat(error.has("param")).isTrue();
    }

    @Test
    void aWrongMethodIsAJson405() {
        byte[] body = client.post().uri("/actuator/health").exchange().expectStatus().isEqualTo(405)
                .expectBody().returnResult().getResponseBodyContent();
        assertThat(JSON.readTree(body).path("error").path("code").asString()).isEqualTo("method_not_allowed");
    }

    @Test
    void envAndConfigpropsShowNoSecret() {
        String env = text("/actuator/env");
        assertThat(env).contains("LAZARUS_TEST_API_KEY").contains("UPSTREAM_TOKEN_FROM_ENV").contains("sun.java.command")
                .contains("--lazarus.security.api-keys[0]=***");
        String configprops = text("/actuator/configprops");
        assertThat(configprops).contains("lazarus");
        for (String secret : new String[] {ADMIN_TOKEN, API_KEY, UPSTREAM_KEY}) {
            assertThat(env).doesNotContain(secret);
            assertThat(configprops).doesNotContain(secret);
        }
    }

    private JsonNode get(String path, String token, int status) {
        // as sent, not normalised by a URI builder
        WebTestClient.RequestHeadersSpec<?> request = client.get().uri(URI.create("http://127.0.0.1:" + port + path));
        if (token != null) {
            request = request.header("Authorization", "Bearer " + token);
        }
        byte[] body = request.exchange().expectStatus().isEqualTo(status).expectBody().returnResult()
                .getResponseBodyContent();
        assertThat(body).as("a JSON body for %s", path).isNotNull().isNotEmpty();
        return JSON.readTree(body);
    }

    private String text(String path) {
        byte[] body = client.get().uri(path).exchange().expectStatus().isOk().expectBody().returnResult()
                .getResponseBodyContent();
        return new String(body);
    }
}
