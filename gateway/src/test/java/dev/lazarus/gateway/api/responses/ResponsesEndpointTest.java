package dev.lazarus.gateway.api.responses;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.gateway.api.OpenAiController;
import dev.lazarus.gateway.testing.GatewayTestSupport;
import java.util.List;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import tools.jackson.databind.JsonNode;

/** {@code /v1/responses} over the scripted backends: the wire format, the store, failover, resume and errors. */
class ResponsesEndpointTest extends GatewayTestSupport {

    private static final String RESUME = "\"script\": {\"alpha\": {\"fail\": \"UPSTREAM\", \"fail_after\": 2},"
            + " \"beta\": {\"tokens\": [\" there\", \"!\"]}}";

    @Autowired
    MeterRegistry meters;

    private JsonNode create(String body) {
        return json(post("/v1/responses", body).expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith("application/json")
                .expectBody(String.class).returnResult().getResponseBody());
    }

    /** The stream's events, checking the framing: {@code event: <type>} then its data, no [DONE]. */
    private List<JsonNode> stream(String body) {
        String text = post("/v1/responses", body).expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith("text/event-stream")
                .expectBody(String.class).returnResult().getResponseBody();
        assertThat(text).doesNotContain("[DONE]");
        return namedEvents(text);
    }

    @Test
    void aWholeAnswerIsAResponseObjectWithAMessageAndUsage() {
        JsonNode response = create("{\"model\": \"test-model\", \"input\": \"hi\", \"metadata\": {\"k\": \"v\"}}");
        assertThat(response.get("id").asString()).startsWith("resp_");
        assertThat(response.get("object").asString()).isEqualTo("response");
        assertThat(response.get("status").asString()).isEqualTo("completed");
        assertThat(response.get("model").asString()).as("the model that answered, as chat says").isEqualTo("scripted");
        assertThat(response.get("created_at").asLong()).isGreaterThan(1_700_000_000L);
        assertThat(response.at("/metadata/k").asString()).isEqualTo("v");
        assertThat(response.at("/output/0/type").asString()).isEqualTo("message");
        assertThat(response.at("/output/0/role").asString()).isEqualTo("assistant");
        assertThat(response.at("/output/0/content/0/text").asString()).isEqualTo("Hello, world");
        assertThat(response.at("/usage/output_tokens").asInt()).isEqualTo(3);
        assertThat(response.at("/usage/total_tokens").asInt())
                .isEqualTo(response.at("/usage/input_tokens").asInt() + 3);
        assertThat(meters.find("lazarus.completion.tokens").tag("endpoint", "responses").counter())
                .as("metered as the Responses endpoint").isNotNull()
                .satisfies(counter -> assertThat(counter.count()).isPositive());
    }

    /** {@code response-model: served} (the default): the response names the model that answered, streamed or not. */
    @Test
    void theResponseNamesTheModelThatAnswered() {
        assertThat(create("{\"model\": \"mapped-model\", \"input\": \"hi\"}").get("model").asString())
                .isEqualTo("inner-name");
        List<JsonNode> events = stream("{\"model\": \"mapped-model\", \"input\": \"hi\", \"stream\": true}");
        assertThat(events.getFirst().at("/response/model").asString()).isEqualTo("inner-name");
        assertThat(events.getLast().at("/response/model").asString()).isEqualTo("inner-name");
    }

    @Test
    void aStreamIsOneResponseOfTypedEventsInOrder() {
        List<JsonNode> events = stream("{\"model\": \"test-model\", \"input\": \"hi\", \"stream\": true}");
        assertThat(events).extracting(e -> e.get("type").asString()).containsExactly(
                "response.created", "response.in_progress", "response.output_item.added",
                "response.content_part.added", "response.output_text.delta", "response.output_text.delta",
                "response.output_text.delta", "response.output_text.done", "response.content_part.done",
                "response.output_item.done", "response.completed");
        for (int i = 0; i < events.size(); i++) {
            assertThat(events.get(i).get("sequence_number").asInt()).isEqualTo(i);
        }
        assertThat(events.getLast().at("/response/output/0/content/0/text").asString()).isEqualTo("Hello, world");
    }

    @Test
    void aStreamCutMidAnswerGoesOnOnTheNextBackendAsOneResponse() {
        List<JsonNode> events = stream("{\"model\": \"resume-model\", \"input\": \"hi\", \"stream\": true, "
                + RESUME + "}");
        assertThat(events).extracting(e -> e.get("type").asString())
                .containsOnlyOnce("response.created", "response.output_item.added", "response.completed")
                .doesNotContain("response.failed", "error");
        StringBuilder text = new StringBuilder();
        events.stream().filter(e -> e.get("type").asString().equals("response.output_text.delta"))
                .forEach(e -> text.append(e.get("delta").asString()));
        assertThat(text).hasToString("Hello, there!");
        assertThat(events.getLast().at("/response/output/0/content/0/text").asString()).isEqualTo("Hello, there!");
    }

    @Test
    void aFailureBeforeTheFirstTokenFallsBackAndOneAfterItEndsInResponseFailed() {
        EntityExchangeResult<String> fallback = post("/v1/responses",
                "{\"model\": \"test-model\", \"input\": \"hi\", \"script\": {\"alpha\": {\"fail\": \"UNAVAILABLE\"}}}")
                .expectStatus().isOk().expectBody(String.class).returnResult();
        assertThat(fallback.getResponseHeaders().getFirst(OpenAiController.SERVED_BY_HEADER)).isEqualTo("beta");

        List<JsonNode> events = stream("{\"model\": \"test-model\", \"input\": \"hi\", \"stream\": true, "
                + "\"script\": {\"alpha\": {\"fail\": \"INTERNAL\", \"fail_after\": 2}}}");
        JsonNode failed = events.getLast();
        assertThat(failed.get("type").asString()).isEqualTo("response.failed");
        assertThat(failed.at("/response/status").asString()).isEqualTo("failed");
        assertThat(failed.at("/response/error/code").asString()).isEqualTo("internal_error");
        assertThat(failed.at("/response/error/message").asString()).doesNotContain("scripted");
    }

    @Test
    void unknownFieldsReachTheBackendAndTheResponsesOwnDoNot() {
        create("{\"model\": \"test-model\", \"input\": \"hi\", \"top_k\": 40, \"cache_prompt\": true, "
                + "\"store\": false, \"include\": [], \"max_output_tokens\": 9}");
        ChatCompletionRequest seen = backend("alpha").lastChat();
        assertThat(seen.extra()).containsEntry("top_k", 40).containsEntry("cache_prompt", true)
                .doesNotContainKeys("store", "include", "max_output_tokens", "input");
        assertThat(seen.maxTokens()).isEqualTo(9);
    }

    @Test
    void storedResponsesAreContinuedRetrievedListedAndDeleted() {
        JsonNode first = create("{\"model\": \"test-model\", \"instructions\": \"Be kind.\", \"input\": \"One\"}");
        String id = first.get("id").asString();
        JsonNode second = create("{\"model\": \"test-model\", \"input\": \"Two\", \"previous_response_id\": \"" + id + "\"}");
        assertThat(second.get("previous_response_id").asString()).isEqualTo(id);
        assertThat(backend("alpha").lastChat().messages()).as("instructions are not carried over, as OpenAI does")
                .containsExactly(ChatMessage.user("One"), ChatMessage.assistant("Hello, world"), ChatMessage.user("Two"));

        client.get().uri("/v1/responses/" + id).header("Authorization", "Bearer " + API_KEY).exchange()
                .expectStatus().isOk().expectBody().jsonPath("$.id").isEqualTo(id)
                .jsonPath("$.output[0].content[0].text").isEqualTo("Hello, world");
        client.get().uri("/v1/responses/" + id + "/input_items").header("Authorization", "Bearer " + API_KEY).exchange()
                .expectStatus().isOk().expectBody().jsonPath("$.object").isEqualTo("list")
                .jsonPath("$.data.length()").isEqualTo(1)
                .jsonPath("$.data[0].content[0].text").isEqualTo("One")
                .jsonPath("$.data[0].id").value(v -> assertThat((String) v).startsWith("msg_"))
                .jsonPath("$.has_more").isEqualTo(false);
        client.delete().uri("/v1/responses/" + id).header("Authorization", "Bearer " + API_KEY).exchange()
                .expectStatus().isOk().expectBody().jsonPath("$.deleted").isEqualTo(true)
                .jsonPath("$.object").isEqualTo("response.deleted");
        client.get().uri("/v1/responses/" + id).header("Authorization", "Bearer " + API_KEY).exchange()
                .expectStatus().isNotFound().expectBody().jsonPath("$.error.type").isEqualTo("invalid_request_error")
                .jsonPath("$.error.message").isEqualTo("Response with id '" + id + "' not found.");
    }

    @Test
    void anItemReferenceIsTheStoredItemItNamesAndAnUnknownOneIsA404() {
        JsonNode first = create("{\"model\": \"test-model\", \"input\": \"One\"}");
        String output = first.at("/output/0/id").asString();
        String[] input = new String[1];
        client.get().uri("/v1/responses/" + first.get("id").asString() + "/input_items")
                .header("Authorization", "Bearer " + API_KEY).exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.data[0].id").value(v -> input[0] = (String) v);
        JsonNode second = create("{\"model\": \"test-model\", \"input\": [{\"type\": \"item_reference\", \"id\": \""
                + input[0] + "\"}, {\"type\": \"item_reference\", \"id\": \"" + output + "\"}, "
                + "{\"role\": \"user\", \"content\": \"Two\"}]}");
        assertThat(second.get("status").asString()).isEqualTo("completed");
        assertThat(backend("alpha").lastChat().messages())
                .containsExactly(ChatMessage.user("One"), ChatMessage.assistant("Hello, world"), ChatMessage.user("Two"));
        client.get().uri("/v1/responses/" + second.get("id").asString() + "/input_items?order=asc")
                .header("Authorization", "Bearer " + API_KEY).exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.data.length()").isEqualTo(3)
                .jsonPath("$.data[0].id").isEqualTo(input[0])
                .jsonPath("$.data[1].id").isEqualTo(output)
                .jsonPath("$.data[1].role").isEqualTo("assistant");

        post("/v1/responses", "{\"model\": \"test-model\", \"input\": [{\"role\": \"user\", \"content\": \"hi\"}, "
                + "{\"type\": \"item_reference\", \"id\": \"msg_nope\"}]}")
                .expectStatus().isNotFound().expectBody()
                .jsonPath("$.error.type").isEqualTo("invalid_request_error")
                .jsonPath("$.error.param").isEqualTo("input[1].id")
                .jsonPath("$.error.message").isEqualTo("Item with id 'msg_nope' not found.");
        post("/v1/responses", "{\"model\": \"test-model\", \"input\": [{\"type\": \"item_reference\"}]}")
                .expectStatus().isBadRequest().expectBody()
                .jsonPath("$.error.type").isEqualTo("invalid_request_error")
                .jsonPath("$.error.param").isEqualTo("input[0].id");
    }

    @Test
    void storeFalseKeepsNothingAndAnUnknownPreviousResponseIsA404() {
        String id = create("{\"model\": \"test-model\", \"input\": \"hi\", \"store\": false}").get("id").asString();
        client.get().uri("/v1/responses/" + id).header("Authorization", "Bearer " + API_KEY).exchange()
                .expectStatus().isNotFound();
        post("/v1/responses", "{\"model\": \"test-model\", \"input\": \"hi\", \"previous_response_id\": \"resp_nope\"}")
                .expectStatus().isNotFound().expectBody()
                .jsonPath("$.error.param").isEqualTo("previous_response_id")
                .jsonPath("$.error.code").isEqualTo("previous_response_not_found");
    }

    @Test
    void badRequestsAreOpenAiErrorsAndKeysAreRequired() {
        post("/v1/responses", "{\"input\": \"hi\"}").expectStatus().isBadRequest()
                .expectBody().jsonPath("$.error.param").isEqualTo("model");
        post("/v1/responses", "{\"model\": \"no-such-model\", \"input\": \"hi\"}").expectStatus().isNotFound()
                .expectBody().jsonPath("$.error.code").isEqualTo("model_not_found");
        post("/v1/responses", "{\"model\": \"test-model\", \"input\": [{\"type\": 42, \"id\": 7}]}")
                .expectStatus().isBadRequest().expectBody().jsonPath("$.error.param").isEqualTo("input[0].type");
        post("/v1/responses", "[1]").expectStatus().isBadRequest()
                .expectBody().jsonPath("$.error.type").isEqualTo("invalid_request_error");
        post("/v1/responses", "{\"model\": \"test-model\", \"input\": \"hi\", \"temperature\": \"hot\"}")
                .expectStatus().isBadRequest().expectBody().jsonPath("$.error.param").isEqualTo("temperature");
        client.post().uri("/v1/responses").bodyValue("{\"model\": \"test-model\", \"input\": \"hi\"}")
                .header("Content-Type", "application/json").exchange()
                .expectStatus().isUnauthorized().expectBody().jsonPath("$.error.code").isEqualTo("invalid_api_key");
        client.get().uri("/v1/responses/resp_x").exchange().expectStatus().isUnauthorized();
    }
}
