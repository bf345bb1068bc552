package dev.lazarus.gateway.api;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.tomakehurst.wiremock.WireMockServer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Issue 14, finding 3: the usage details an OpenAI-compatible upstream sends
 * ({@code prompt_tokens_details.cached_tokens}, {@code completion_tokens_details.reasoning_tokens})
 * reach the client, streamed and not.
 */
@SpringBootTest(properties = {"lazarus.security.api-keys[0]=usage-key", "lazarus.health.interval=1h"})
@ActiveProfiles("test")
@AutoConfigureWebTestClient
class UsageDetailsTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static WireMockServer upstream;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        upstream = new WireMockServer(options().bindAddress("127.0.0.1").dynamicPort());
        upstream.start();
        upstream.stubFor(get(urlEqualTo("/v1/models")).willReturn(okJson("{\"object\":\"list\",\"data\":[{\"id\":\"up\",\"object\":\"model\"}]}")));
        upstream.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream").withBody(
                        "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"up\","
                                + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\n"
                                + "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"up\","
                                + "\"choices\":[],\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":9,\"total_tokens\":49,"
                                + "\"prompt_tokens_details\":{\"cached_tokens\":32,\"audio_tokens\":0},"
                                + "\"completion_tokens_details\":{\"reasoning_tokens\":8}}}\n\n"
                                + "data: [DONE]\n\n")));
        registry.add("lazarus.backends[0].id", () -> "up");
        registry.add("lazarus.backends[0].kind", () -> "openai");
        registry.add("lazarus.backends[0].settings.url", upstream::baseUrl);
        registry.add("lazarus.backends[0].settings.model-name", () -> "up");
        registry.add("lazarus.models[0].name", () -> "m");
        registry.add("lazarus.models[0].backends[0]", () -> "up");
    }

    @AfterAll
    static void stop() {
        upstream.stop();
    }

    @Autowired
    WebTestClient client;

    private byte[] chat(String extra) {
        return client.mutate().responseTimeout(Duration.ofSeconds(30)).build().post().uri("/v1/chat/completions")
                .header("Authorization", "Bearer usage-key").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]" + extra + "}")
                .exchange().expectStatus().isOk().expectBody().returnResult().getResponseBody();
    }

    @Test
    void theDetailsReachANonStreamingClient() {
        assertDetails(JSON.readTree(chat("")).get("usage"));
    }

    @Test
    void theDetailsReachAStreamingClientThatAskedForUsage() {
        String body = new String(chat(",\"stream\":true,\"stream_options\":{\"include_usage\":true}"));
        List<String> events = Arrays.stream(body.split("\n")).filter(l -> l.startsWith("data:"))
                .map(l -> l.substring("data:".length()).strip()).filter(d -> !d.equals("[DONE]")).toList();
        assertDetails(JSON.readTree(events.getLast()).get("usage"));
    }

    private static void assertDetails(JsonNode usage) {
        assertThat(usage.get("prompt_tokens").asInt()).isEqualTo(40);
        assertThat(usage.at("/prompt_tokens_details/cached_tokens").asInt()).isEqualTo(32);
        assertThat(usage.at("/prompt_tokens_details/audio_tokens").isNumber()).isTrue();
        assertThat(usage.at("/completion_tokens_details/reasoning_tokens").asInt()).isEqualTo(8);
    }
}
