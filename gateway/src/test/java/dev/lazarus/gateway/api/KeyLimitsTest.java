package dev.lazarus.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.policy.PolicyCallDecorator;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Issue 35 item 4, per-key limits: a key past its requests per minute, its tokens per minute (a key of its own
 * limits) or its requests under way gets OpenAI's 429 with {@code Retry-After}, while another key is served; a request under way frees its place when it ends; a request
 * with no output limit gets its model's default. A real local upstream that streams as many tokens as it is asked
 * for (its default: millions), raw HTTP on sockets.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "lazarus.security.api-keys[0]=key-a", "lazarus.security.api-keys[1]=key-b", "lazarus.security.api-keys[2]=key-c", "lazarus.health.interval=1h",
        "lazarus.security.api-keys[3]=key-d", "lazarus.security.api-keys[4]=key-e",
        "lazarus.key-limits.requests-per-minute=3", "lazarus.key-limits.concurrent-requests=1",
        "lazarus.key-limits.keys[0].name=metered", "lazarus.key-limits.keys[0].key=key-d",
        "lazarus.key-limits.keys[0].requests-per-minute=10", "lazarus.key-limits.keys[0].tokens-per-minute=20"})
@ActiveProfiles("test")
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class KeyLimitsTest {

    private static FloodingUpstream upstream;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) throws IOException {
        upstream = new FloodingUpstream(5_000_000);
        registry.add("lazarus.backends[0].id", () -> "flood");
        registry.add("lazarus.backends[0].kind", () -> "llamacpp");
        registry.add("lazarus.backends[0].settings.url", upstream::baseUrl);
        registry.add("lazarus.backends[0].settings.model-name", () -> "flood");
        registry.add("lazarus.models[0].name", () -> "flood-model");
        registry.add("lazarus.models[0].backends[0]", () -> "flood");
        registry.add("lazarus.models[0].default-max-tokens", () -> "7");
    }

    @AfterAll
    static void stop() throws IOException {
        upstream.close();
    }

    @LocalServerPort
    int port;

    @Autowired
    PolicyCallDecorator calls;

    private final JsonMapper json = JsonMapper.builder().build();

    @Test
    void aKeyOverItsRequestsPerMinuteGets429WithRetryAfterAndAnotherKeyIsServed() throws Exception {
        for (int i = 0; i < 3; i++) {
            assertThat(exchange("key-b", 3)).startsWith("HTTP/1.1 200").endsWith("data: [DONE]\n\n");
        }
        String refused = exchange("key-b", 3);
        assertRateLimited(refused, "requests per minute");
        long retryAfter = Long.parseLong(header(refused, "Retry-After"));
        assertThat(retryAfter).isBetween(1L, 60L);
        assertThat(exchange("key-a", 3)).startsWith("HTTP/1.1 200");
    }

    @Test
    void aKeyWhoseAnswersCountedItsTokensPerMinuteGets429UntilItsWindowRenewsAndAnotherKeyIsServed() throws Exception {
        // its own limit: 20 tokens a minute; the upstream reports no usage, so each streamed chunk counts one
        assertThat(exchange("key-d", 15)).startsWith("HTTP/1.1 200").endsWith("data: [DONE]\n\n");
        assertThat(exchange("key-d", 15)).startsWith("HTTP/1.1 200").endsWith("data: [DONE]\n\n");
        String refused = exchange("key-d", 1);
        assertThat(refused).startsWith("HTTP/1.1 429");
        JsonNode error = json.readTree(refused.substring(refused.indexOf("\r\n\r\n") + 4)).get("error");
        assertThat(error.get("type").asString()).isEqualTo("tokens");
        assertThat(error.get("code").asString()).isEqualTo("rate_limit_exceeded");
        assertThat(error.get("message").asString()).contains("tokens per minute", "limit 20, used 30")
                .doesNotContain("key-d");
        assertThat(Long.parseLong(header(refused, "Retry-After"))).isBetween(1L, 60L);
        // a refused request is not charged, and other keys (no token limit by default) are served
        assertThat(exchange("key-d", 1)).startsWith("HTTP/1.1 429");
        assertThat(exchange("key-e", 30)).startsWith("HTTP/1.1 200");
    }

    @Test
    void aKeyWithARequestUnderWayGets429UntilItEnds() throws Exception {
        try (Socket open = new Socket("127.0.0.1", port)) {
            // a stream that goes on until its client leaves
            open.getOutputStream().write(request("key-a", 5_000_000).getBytes(StandardCharsets.US_ASCII));
            byte[] head = new byte[16];
            assertThat(new String(head, 0, open.getInputStream().read(head), StandardCharsets.US_ASCII))
                    .startsWith("HTTP/1.1 200");
            assertRateLimited(exchange("key-a", 3), "concurrent requests");
        }
        long end = System.currentTimeMillis() + 20_000;
        while (calls.inFlight("flood") > 0 && System.currentTimeMillis() < end) {
            Thread.sleep(50);
        }
        assertThat(exchange("key-a", 3)).startsWith("HTTP/1.1 200").endsWith("data: [DONE]\n\n");
    }

    @Test
    void aRequestWithNoOutputLimitGetsItsModelsDefault() throws Exception {
        String body = "{\"model\":\"flood-model\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
        String response = exchange("key-c", body);
        assertThat(response).startsWith("HTTP/1.1 200").endsWith("data: [DONE]\n\n");
        assertThat(response.split("\"content\":\"lorem", -1)).hasSize(7 + 1);
        // the client's own limit stands
        assertThat(exchange("key-c", 9).split("\"content\":\"lorem", -1)).hasSize(9 + 1);
    }

    private void assertRateLimited(String response, String limit) {
        assertThat(response).startsWith("HTTP/1.1 429");
        assertThat(header(response, "Retry-After")).matches("[1-9][0-9]*");
        JsonNode error = json.readTree(response.substring(response.indexOf("\r\n\r\n") + 4)).get("error");
        assertThat(error.get("type").asString()).isEqualTo("requests");
        assertThat(error.get("code").asString()).isEqualTo("rate_limit_exceeded");
        assertThat(error.get("param").isNull()).isTrue();
        assertThat(error.get("message").asString()).contains(limit);
    }

    private static String header(String response, String name) {
        for (String line : response.substring(0, response.indexOf("\r\n\r\n")).split("\r\n")) {
            if (line.regionMatches(true, 0, name + ":", 0, name.length() + 1)) {
                return line.substring(name.length() + 1).trim();
            }
        }
        return null;
    }

    private static String request(String key, long maxTokens) {
        return request(key, "{\"model\":\"flood-model\",\"stream\":true,\"max_tokens\":" + maxTokens
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
    }

    private static String request(String key, String body) {
        return "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key + "\r\n"
                + "Connection: close\r\nContent-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n"
                + body;
    }

    /** One request on its own connection, the whole response with the chunked framing taken off its body. */
    private String exchange(String key, long maxTokens) throws IOException {
        return exchange(key, request(key, maxTokens));
    }

    private String exchange(String key, String bodyOrRequest) throws IOException {
        String request = bodyOrRequest.startsWith("POST ") ? bodyOrRequest : request(key, bodyOrRequest);
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(20_000);
            socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
            InputStream in = socket.getInputStream();
            String raw = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
            int bodyAt = raw.indexOf("\r\n\r\n") + 4;
            String head = raw.substring(0, bodyAt);
            if (!head.toLowerCase().contains("transfer-encoding: chunked")) {
                return raw;
            }
            StringBuilder body = new StringBuilder();
            int at = bodyAt;
            while (true) {
                int lineEnd = raw.indexOf("\r\n", at);
                int size = Integer.parseInt(raw.substring(at, lineEnd).trim(), 16);
                if (size == 0) {
                    break;
                }
                body.append(raw, lineEnd + 2, lineEnd + 2 + size);
                at = lineEnd + 2 + size + 2;
            }
            return head + body;
        }
    }
}
