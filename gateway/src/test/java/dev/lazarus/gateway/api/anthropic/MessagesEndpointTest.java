package dev.lazarus.gateway.api.anthropic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.api.OpenAiController;
import dev.lazarus.gateway.testing.GatewayTestSupport;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

/** The Messages endpoints through the whole gateway, in front of scripted backends. */
class MessagesEndpointTest extends GatewayTestSupport {

    @Autowired
    MeterRegistry meters;

    private static String message(String model, String extra) {
        return "{\"model\": \"" + model + "\", \"max_tokens\": 16, \"messages\": [{\"role\": \"user\", \"content\": "
                + "\"hi\"}]" + extra + "}";
    }

    /** As Anthropic's clients send it: the key in x-api-key, the version header. */
    private WebTestClient.ResponseSpec anthropic(String path, String body) {
        return client.post().uri(path)
                .header("x-api-key", API_KEY)
                .header("anthropic-version", "2023-06-01")
                .header("anthropic-beta", "interleaved-thinking-2025-05-14")
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body)
                .exchange();
    }

    @Test
    void aWholeAnswerIsAnAnthropicMessage() {
        JsonNode answer = json(anthropic("/v1/messages", message("test-model", ""))
                .expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody());
        assertThat(answer.get("id").asString()).startsWith("msg_");
        assertThat(answer.get("type").asString()).isEqualTo("message");
        assertThat(answer.get("role").asString()).isEqualTo("assistant");
        assertThat(answer.at("/content/0/type").asString()).isEqualTo("text");
        assertThat(answer.at("/content/0/text").asString()).isEqualTo("Hello, world");
        assertThat(answer.get("content")).hasSize(1);
        assertThat(answer.get("stop_reason").asString()).isEqualTo("end_turn");
        assertThat(answer.has("stop_sequence")).isTrue();
        assertThat(answer.at("/usage/output_tokens").asInt()).isEqualTo(3);
        assertThat(answer.at("/usage/input_tokens").asInt()).isPositive();
    }

    @Test
    void aStreamIsAnthropicsEventsInOrder() {
        String body = anthropic("/v1/messages", message("test-model", ", \"stream\": true"))
                .expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith("text/event-stream")
                .expectBody(String.class).returnResult().getResponseBody();
        List<JsonNode> events = namedEvents(body);
        assertThat(events.stream().map(e -> e.get("type").asString())).containsExactly("message_start", "ping",
                "content_block_start", "content_block_delta", "content_block_delta", "content_block_delta",
                "content_block_stop", "message_delta", "message_stop");
        assertThat(events.getFirst().at("/message/id").asString()).startsWith("msg_");
        assertThat(events.stream().filter(e -> e.has("delta") && e.at("/delta/type").asString("").equals("text_delta"))
                .map(e -> e.at("/delta/text").asString())).containsExactly("Hello", ",", " world");
        assertThat(events.get(7).at("/delta/stop_reason").asString()).isEqualTo("end_turn");
        assertThat(events.get(7).at("/usage/output_tokens").asInt()).isEqualTo(3);
    }

    @Test
    void aStreamCutMidAnswerContinuesOnTheNextBackendAsOneMessage() {
        String script = ", \"stream\": true, \"script\": {\"alpha\": {\"fail\": \"UPSTREAM\", \"fail_after\": 2},"
                + " \"beta\": {\"tokens\": [\" there\", \"!\"]}}";
        EntityExchangeResult<String> result = anthropic("/v1/messages", message("resume-model", script))
                .expectStatus().isOk().expectBody(String.class).returnResult();
        List<JsonNode> events = namedEvents(result.getResponseBody());
        assertThat(events.stream().map(e -> e.get("type").asString()).filter("message_start"::equals)).hasSize(1);
        assertThat(events.stream().map(e -> e.get("type").asString()).filter("content_block_start"::equals)).hasSize(1);
        StringBuilder text = new StringBuilder();
        events.stream().filter(e -> e.at("/delta/type").asString("").equals("text_delta"))
                .forEach(e -> text.append(e.at("/delta/text").asString()));
        assertThat(text.toString()).isEqualTo("Hello, there!");
        assertThat(events.getLast().get("type").asString()).isEqualTo("message_stop");
        assertThat(result.getResponseHeaders().getFirst(OpenAiController.SERVED_BY_HEADER)).isEqualTo("alpha");
    }

    @Test
    void aFailureAfterTheStreamBeganIsAnErrorEvent() {
        String body = anthropic("/v1/messages", message("test-model",
                ", \"stream\": true, \"script\": {\"*\": {\"fail\": \"UPSTREAM\", \"fail_after\": 1}}"))
                .expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
        List<JsonNode> events = namedEvents(body);
        assertThat(events.getFirst().get("type").asString()).isEqualTo("message_start");
        JsonNode error = events.getLast();
        assertThat(error.get("type").asString()).isEqualTo("error");
        assertThat(error.at("/error/type").asString()).isIn("api_error", "overloaded_error");
        assertThat(error.at("/error/message").asString()).isNotBlank();
    }

    @Test
    void countTokensIsThePromptAsTheBackendCountsIt() {
        JsonNode count = json(anthropic("/v1/messages/count_tokens",
                "{\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}")
                .expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody());
        assertThat(count.get("input_tokens").asInt()).isPositive();
        assertThat(count.size()).isEqualTo(1);
    }

    @Test
    void errorsAreInAnthropicsShapeWithItsStatusCodes() {
        assertError(anthropic("/v1/messages", "{\"model\": \"test-model\", \"messages\": []}"), 400,
                "invalid_request_error", "max_tokens: Field required");
        assertError(anthropic("/v1/messages", message("no-such-model", "")), 404, "not_found_error", "no-such-model");
        assertError(anthropic("/v1/messages", message("test-model", ", \"stream\": true, \"script\": "
                + "{\"*\": {\"fail\": \"UNAVAILABLE\"}}")), 529, "overloaded_error", "test-model");
        assertError(anthropic("/v1/messages", "{not json"), 400, "invalid_request_error", "JSON");
        assertError(client.post().uri("/v1/messages").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(message("test-model", "")).exchange(), 401, "authentication_error", "API key");
        assertError(client.post().uri("/v1/messages/count_tokens").header("x-api-key", "wrong")
                .contentType(MediaType.APPLICATION_JSON).bodyValue(message("test-model", "")).exchange(), 401,
                "authentication_error", "API key");
    }

    @Test
    void callsAreMeteredAsTheMessagesEndpoints() throws InterruptedException {
        anthropic("/v1/messages", message("mapped-model", "")).expectStatus().isOk();
        anthropic("/v1/messages/count_tokens", "{\"model\": \"mapped-model\", \"messages\": [{\"role\": \"user\","
                + " \"content\": \"hi\"}]}").expectStatus().isOk();
        assertThat(successes("messages")).isPositive();
        assertThat(successes("messages_count_tokens")).isPositive();
    }

    /** The calls counted for an endpoint, once counted: a call is metered as it ends, just after the answer went. */
    private double successes(String endpoint) throws InterruptedException {
        for (int i = 0; i < 100; i++) {
            Counter counter = meters.find("lazarus.backend.calls").tags("model", "mapped-model", "endpoint", endpoint,
                    "outcome", "success").counter();
            if (counter != null) {
                return counter.count();
            }
            Thread.sleep(50);
        }
        return 0;
    }

    @Test
    void theChatEndpointsKeepOpenAisShape() {
        JsonNode error = json(post("/v1/chat/completions", "{\"model\": \"no-such-model\", \"messages\": "
                + "[{\"role\": \"user\", \"content\": \"hi\"}]}").expectStatus().isNotFound()
                .expectBody(String.class).returnResult().getResponseBody());
        assertThat(error.at("/error/code").asString()).isEqualTo("model_not_found");
    }

    private static void assertError(WebTestClient.ResponseSpec response, int status, String type, String message) {
        JsonNode error = json(response.expectStatus().isEqualTo(status)
                .expectHeader().contentTypeCompatibleWith("application/json")
                .expectBody(String.class).returnResult().getResponseBody());
        assertThat(error.get("type").asString()).isEqualTo("error");
        assertThat(error.at("/error/type").asString()).isEqualTo(type);
        assertThat(error.at("/error/message").asString()).contains(message);
    }
}
