package dev.lazarus.gateway.api;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.equalToJson;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.tomakehurst.wiremock.WireMockServer;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Issue 13: a non-streaming request to OpenAI-shaped upstreams stays non-streaming upstream, and
 * their answer reaches the client whole: every field they sent (system_fingerprint, usage details,
 * logprobs, refusal, fields the gateway does not know), only id and model written over (and created
 * where the server's is not a whole number of seconds).
 * A failure before the answer moves the request to the next backend.
 */
@SpringBootTest(properties = {"lazarus.security.api-keys[0]=whole-key", "lazarus.health.interval=1h",
        "lazarus.resilience.attempt.retries=0"})
@ActiveProfiles("test")
@AutoConfigureWebTestClient
class WholeAnswerPassThroughTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    /** An answer with every field OpenAI sends that the gateway's own types would drop or change. */
    static final String ANSWER = """
            {"id":"chatcmpl-upstream","object":"chat.completion","created":1700000000,"model":"gpt-up",\
            "system_fingerprint":"fp_44709d6fcb",\
            "choices":[{"index":0,"message":{"role":"assistant","content":"Hello there","refusal":null,\
            "annotations":[]},"logprobs":{"content":[{"token":"Hello","logprob":-0.25,"bytes":[72,101,108,108,111],\
            "top_logprobs":[]}],"refusal":null},"finish_reason":"stop"}],\
            "usage":{"prompt_tokens":40,"completion_tokens":9,"total_tokens":49,\
            "prompt_tokens_details":{"cached_tokens":32,"audio_tokens":0},\
            "completion_tokens_details":{"reasoning_tokens":8,"accepted_prediction_tokens":0}},\
            "service_tier":"default"}""";

    private static WireMockServer first;
    private static WireMockServer second;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        first = new WireMockServer(options().bindAddress("127.0.0.1").dynamicPort());
        second = new WireMockServer(options().bindAddress("127.0.0.1").dynamicPort());
        first.start();
        second.start();
        stubModels();
        int i = 0;
        for (WireMockServer upstream : new WireMockServer[] {first, second}) {
            String id = i == 0 ? "first" : "second";
            registry.add("lazarus.backends[" + i + "].id", () -> id);
            registry.add("lazarus.backends[" + i + "].kind", () -> "openai");
            registry.add("lazarus.backends[" + i + "].settings.url", upstream::baseUrl);
            registry.add("lazarus.backends[" + i + "].settings.model-name", () -> "gpt-up");
            registry.add("lazarus.models[0].backends[" + i + "]", () -> id);
            i++;
        }
        registry.add("lazarus.models[0].name", () -> "m");
    }

    @AfterAll
    static void stop() {
        first.stop();
        second.stop();
    }

    /** What the health checks ask (the first before any test runs). */
    private static void stubModels() {
        for (WireMockServer upstream : new WireMockServer[] {first, second}) {
            upstream.stubFor(get(urlEqualTo("/v1/models"))
                    .willReturn(okJson("{\"object\":\"list\",\"data\":[{\"id\":\"gpt-up\",\"object\":\"model\"}]}")));
        }
    }

    @BeforeEach
    void stubs() {
        first.resetAll();
        second.resetAll();
        stubModels();
    }

    @Autowired
    WebTestClient client;

    private EntityExchangeResult<byte[]> chat() {
        return client.mutate().responseTimeout(Duration.ofSeconds(30)).build().post().uri("/v1/chat/completions")
                .header("Authorization", "Bearer whole-key").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"logprobs\":true,"
                        + "\"top_k\":7}")
                .exchange().expectStatus().isOk().expectBody().returnResult();
    }

    @Test
    void theUpstreamsAnswerReachesTheClientWholeButForItsIdentity() {
        first.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(okJson(ANSWER)));

        EntityExchangeResult<byte[]> result = chat();
        JsonNode answer = JSON.readTree(result.getResponseBody());

        JsonNode expected = JSON.readTree(ANSWER);
        assertThat(answer.get("id").asString()).startsWith("chatcmpl-").isNotEqualTo("chatcmpl-upstream");
        assertThat(answer.get("model").asString()).isEqualTo("gpt-up"); // served (the default response model)
        assertThat(new String(result.getResponseBody(), java.nio.charset.StandardCharsets.UTF_8))
                .as("the server's bytes, its id written over").isEqualTo(ANSWER.replace("\"chatcmpl-upstream\"",
                        "\"" + answer.get("id").asString() + "\""));
        for (String field : new String[] {"object", "system_fingerprint", "choices", "usage", "service_tier"}) {
            assertThat(answer.get(field)).as(field).isEqualTo(expected.get(field));
        }
        assertThat(answer.at("/usage/prompt_tokens_details/cached_tokens").asInt()).isEqualTo(32);
        assertThat(answer.at("/usage/completion_tokens_details/reasoning_tokens").asInt()).isEqualTo(8);
        assertThat(answer.at("/choices/0/message").has("refusal")).isTrue();
        assertThat(answer.at("/choices/0/logprobs/content/0/logprob").asDouble()).isEqualTo(-0.25);
        assertThat(result.getResponseHeaders().getFirst(OpenAiController.SERVED_BY_HEADER)).isEqualTo("first");
        // Sent on as the client asked: not a stream, its unknown fields kept.
        first.verify(postRequestedFor(urlEqualTo("/v1/chat/completions"))
                .withRequestBody(matchingJsonPath("$.top_k", equalToJson("7")))
                .withRequestBody(matchingJsonPath("$.logprobs", equalToJson("true"))));
        String sent = first.getAllServeEvents().getFirst().getRequest().getBodyAsString();
        assertThat(JSON.readTree(sent).path("stream").asBoolean(false)).as(sent).isFalse();
        assertThat(JSON.readTree(sent).has("stream_options")).as(sent).isFalse();
    }

    @Test
    void aLegacyCompletionIsPassedThroughToo() {
        String answer = "{\"id\":\"cmpl-up\",\"object\":\"text_completion\",\"created\":1700000000,\"model\":\"gpt-up\","
                + "\"system_fingerprint\":\"fp_1\",\"choices\":[{\"text\":\" world\",\"index\":0,\"logprobs\":null,"
                + "\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2,\"total_tokens\":3}}";
        first.stubFor(post(urlEqualTo("/v1/completions")).willReturn(okJson(answer)));

        byte[] body = client.mutate().responseTimeout(Duration.ofSeconds(30)).build().post().uri("/v1/completions")
                .header("Authorization", "Bearer whole-key").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"model\":\"m\",\"prompt\":\"hello\",\"max_tokens\":2}")
                .exchange().expectStatus().isOk().expectBody().returnResult().getResponseBody();

        JsonNode got = JSON.readTree(body);
        JsonNode sent = JSON.readTree(answer);
        assertThat(got.get("id").asString()).startsWith("cmpl-").isNotEqualTo("cmpl-up");
        for (String field : new String[] {"object", "system_fingerprint", "choices", "usage"}) {
            assertThat(got.get(field)).as(field).isEqualTo(sent.get(field));
        }
        String upstreamBody = first.getAllServeEvents().getFirst().getRequest().getBodyAsString();
        assertThat(JSON.readTree(upstreamBody).path("stream").asBoolean(false)).isFalse();
    }

    @Test
    void aFailureBeforeTheAnswerMovesTheRequestToTheNextBackend() {
        first.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(500)
                .withHeader("Content-Type", "application/json")
                .withBody("{\"error\":{\"message\":\"boom\",\"type\":\"server_error\"}}")));
        second.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(okJson(ANSWER)));

        EntityExchangeResult<byte[]> result = chat();

        assertThat(JSON.readTree(result.getResponseBody()).at("/choices/0/message/content").asString())
                .isEqualTo("Hello there");
        assertThat(result.getResponseHeaders().getFirst(OpenAiController.SERVED_BY_HEADER)).isEqualTo("second");
    }

    @Test
    void anErrorObjectInA200IsTheUpstreamsErrorAndMovesOn() {
        first.stubFor(post(urlEqualTo("/v1/chat/completions"))
                .willReturn(okJson("{\"error\":{\"message\":\"the server is overloaded\",\"type\":\"server_error\","
                        + "\"code\":503}}")));
        second.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(okJson(ANSWER)));

        EntityExchangeResult<byte[]> result = chat();

        assertThat(result.getResponseHeaders().getFirst(OpenAiController.SERVED_BY_HEADER)).isEqualTo("second");
    }

    @Test
    void theClientsBodyIsSentOnByteForByte() {
        first.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(okJson(ANSWER)));
        String body = "{ \"messages\" : [{\"role\":\"user\",\"content\":\"h\\u00e9 \\\"q\\\"\"}],\n"
                + "  \"model\" : \"m\", \"top_k\":7, \"temperature\":0.50 }";

        client.mutate().responseTimeout(Duration.ofSeconds(30)).build().post().uri("/v1/chat/completions")
                .header("Authorization", "Bearer whole-key").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body).exchange().expectStatus().isOk();

        // Not bound and written again: its spacing, escapes, order and number forms as the client wrote them.
        assertThat(first.getAllServeEvents().getFirst().getRequest().getBodyAsString())
                .isEqualTo(body);
    }

    @Test
    void theClientsCompletionBodyIsSentOnByteForByteAndStreamedWithTheStreamFieldsAppended() {
        first.stubFor(post(urlEqualTo("/v1/completions")).willReturn(okJson("{\"id\":\"cmpl-up\","
                + "\"object\":\"text_completion\",\"created\":1,\"model\":\"gpt-up\",\"choices\":[{\"text\":\"w\","
                + "\"index\":0,\"finish_reason\":\"stop\"}]}")));
        String body = "{ \"prompt\" : [\"h\\u00e9 \\\"q\\\"\"],\n  \"model\" : \"m\", \"top_k\":7, \"temperature\":0.50,"
                + " \"max_tokens\":2 }";
        WebTestClient patient = client.mutate().responseTimeout(Duration.ofSeconds(30)).build();

        patient.post().uri("/v1/completions").header("Authorization", "Bearer whole-key")
                .contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange().expectStatus().isOk();

        assertThat(first.getAllServeEvents().getFirst().getRequest().getBodyAsString()).isEqualTo(body);

        first.resetAll();
        stubModels();
        first.stubFor(post(urlEqualTo("/v1/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream").withBody("data: {\"id\":\"c1\",\"object\":"
                        + "\"text_completion\",\"created\":1,\"model\":\"gpt-up\",\"choices\":[{\"index\":0,\"text\":\"w\","
                        + "\"finish_reason\":\"stop\"}]}\n\ndata: {\"id\":\"c1\",\"object\":\"text_completion\",\"created\":1,"
                        + "\"model\":\"gpt-up\",\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1,"
                        + "\"total_tokens\":2}}\n\ndata: [DONE]\n\n")));
        String streamed = body.replace("\"top_k\":7,", "\"top_k\":7, \"stream\" : true,");

        patient.post().uri("/v1/completions").header("Authorization", "Bearer whole-key")
                .contentType(MediaType.APPLICATION_JSON).bodyValue(streamed).exchange().expectStatus().isOk()
                .expectBody().returnResult();

        assertThat(first.getAllServeEvents().getFirst().getRequest().getBodyAsString())
                .isEqualTo(streamed.substring(0, streamed.lastIndexOf('}'))
                        + ",\"stream_options\":{\"include_usage\":true}}");
    }
}
