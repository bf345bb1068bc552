package dev.lazarus.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.testing.GatewayTestSupport;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * Issue 17, finding 8: memory per request is bounded while the body is read. The size limit answers
 * 413 as soon as a body passes it (before the client has sent the rest, so nothing past it is
 * buffered); the parser refuses nesting deeper than {@code lazarus.limits.max-json-depth} and more
 * tokens (keys, values) than {@code lazarus.limits.max-json-tokens} with a 400. The test profile has
 * a 64KB body limit and 10000 tokens; the depth is the default 64.
 */
class RequestLimitsTest extends GatewayTestSupport {

    private static final String HEAD = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
            + API_KEY + "\r\nContent-Type: application/json\r\n";

    private static String chat(String extra) {
        return "{\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], " + extra + "}";
    }

    private static String nested(int depth) {
        return "[".repeat(depth) + "]".repeat(depth);
    }

    @Test
    void nestingDeeperThanTheLimitIs400() {
        String body = post("/v1/chat/completions", chat("\"x_extra\": " + nested(70)))
                .expectStatus().isEqualTo(400).expectBody(String.class).returnResult().getResponseBody();
        JsonNode error = json(body).get("error");
        assertThat(error.get("type").asString()).isEqualTo("invalid_request_error");
        assertThat(error.get("message").asString()).contains("too complex").containsIgnoringCase("nesting depth")
                .doesNotContain("StreamReadConstraints");
    }

    @Test
    void nestingWithinTheLimitIsServed() {
        post("/v1/chat/completions", chat("\"x_extra\": " + nested(40))).expectStatus().isOk();
    }

    @Test
    void moreKeysThanTheTokenLimitIs400() {
        StringBuilder keys = new StringBuilder("{");
        for (int i = 0; i < 6000; i++) {
            keys.append(i == 0 ? "" : ",").append('"').append(Integer.toString(i, 36)).append("\":0");
        }
        String request = chat("\"x_extra\": " + keys.append('}'));
        assertThat(request.length()).isLessThan(64 * 1024);
        String body = post("/v1/chat/completions", request)
                .expectStatus().isEqualTo(400).expectBody(String.class).returnResult().getResponseBody();
        assertThat(json(body).get("error").get("message").asString()).contains("too complex").containsIgnoringCase("token count");
    }

    @Test
    void aChunkedBodyPastTheLimitIs413BeforeItEnds() throws Exception {
        try (RawHttp socket = new RawHttp(port)) {
            socket.send(HEAD + "Transfer-Encoding: chunked\r\n\r\n");
            String chunk = "x".repeat(8192);
            for (int i = 0; i < 10; i++) {
                socket.send(Integer.toHexString(chunk.length()) + "\r\n" + chunk + "\r\n");
            }
            // 80KB sent of a body that never ends: the answer must not wait for the rest.
            String response = socket.readResponse(10_000);
            assertThat(response).startsWith("HTTP/1.1 413");
            assertThat(SlowClientsTest.openAiError(response).get("code").asString()).isEqualTo("request_too_large");
        }
    }

    @Test
    void aContentLengthPastTheLimitIs413BeforeAnyBody() throws Exception {
        try (RawHttp socket = new RawHttp(port)) {
            socket.send(HEAD + "Content-Length: 20000000\r\n\r\n");
            String response = socket.readResponse(10_000);
            assertThat(response).startsWith("HTTP/1.1 413");
            assertThat(SlowClientsTest.openAiError(response).get("code").asString()).isEqualTo("request_too_large");
        }
    }
}
