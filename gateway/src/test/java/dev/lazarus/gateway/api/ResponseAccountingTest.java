package dev.lazarus.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.testing.GatewayTestSupport;
import org.junit.jupiter.api.Test;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import tools.jackson.databind.JsonNode;

/**
 * Issue 14, finding 3: after a failover a caller sees who answered. Before, {@code model} named the
 * route whatever backend served, and nothing named the backend.
 */
class ResponseAccountingTest extends GatewayTestSupport {

    private static final String RESUME = "\"script\": {\"alpha\": {\"fail\": \"UPSTREAM\", \"fail_after\": 2},"
            + " \"beta\": {\"tokens\": [\" there\", \"!\"]}}";
    private static final String FAIL_FIRST = "\"script\": {\"alpha\": {\"fail\": \"UNAVAILABLE\"}}";

    private static String chat(String model, String extra) {
        return "{\"model\": \"" + model + "\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}],"
                + " \"max_tokens\": 10" + extra + "}";
    }

    @Test
    void theModelThatAnsweredAndItsBackendAreNamed() {
        EntityExchangeResult<String> result = post("/v1/chat/completions", chat("mapped-model", ""))
                .expectStatus().isOk().expectBody(String.class).returnResult();
        assertThat(json(result.getResponseBody()).get("model").asString()).isEqualTo("inner-name");
        assertThat(result.getResponseHeaders().getFirst(OpenAiController.SERVED_BY_HEADER)).isEqualTo("mapped");
    }

    @Test
    void aFallbackIsNamed() {
        EntityExchangeResult<String> result = post("/v1/chat/completions", chat("test-model", ", " + FAIL_FIRST))
                .expectStatus().isOk().expectBody(String.class).returnResult();
        assertThat(result.getResponseHeaders().getFirst(OpenAiController.SERVED_BY_HEADER)).isEqualTo("beta");
    }

    @Test
    void aResumedAnswerNamesEveryBackendThatAnsweredPartOfIt() {
        EntityExchangeResult<String> result = post("/v1/chat/completions", chat("resume-model", ", " + RESUME))
                .expectStatus().isOk().expectBody(String.class).returnResult();
        JsonNode answer = json(result.getResponseBody());
        assertThat(answer.at("/choices/0/message/content").asString()).isEqualTo("Hello, there!");
        assertThat(result.getResponseHeaders().getFirst(OpenAiController.SERVED_BY_HEADER)).isEqualTo("alpha, beta");
    }

    @Test
    void aStreamNamesTheBackendThatStartedIt() {
        EntityExchangeResult<String> result = post("/v1/chat/completions",
                chat("resume-model", ", \"stream\": true, " + RESUME))
                .expectStatus().isOk().expectBody(String.class).returnResult();
        assertThat(result.getResponseHeaders().getFirst(OpenAiController.SERVED_BY_HEADER)).isEqualTo("alpha");
    }
}
