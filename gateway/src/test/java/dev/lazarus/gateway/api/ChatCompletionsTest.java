package dev.lazarus.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.gateway.testing.GatewayTestSupport;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;

class ChatCompletionsTest extends GatewayTestSupport {

    private static String chat(String model, String extra) {
        return """
                {"model": "%s", "messages": [{"role": "user", "content": "hi"}]%s}
                """.formatted(model, extra.isEmpty() ? "" : ", " + extra);
    }

    private String streamBody(String body) {
        return post("/v1/chat/completions", body)
                .expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith("text/event-stream")
                .expectBody(String.class).returnResult().getResponseBody();
    }

    @Test
    void nonStreamingAnswerIsAggregatedWithTheGatewaysIdentity() {
        String body = post("/v1/chat/completions", chat("test-model", ""))
                .expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith("application/json")
                .expectBody(String.class).returnResult().getResponseBody();
        JsonNode answer = json(body);
        assertThat(answer.get("id").asString()).startsWith("chatcmpl-").doesNotContain("scripted");
        assertThat(answer.get("object").asString()).isEqualTo("chat.completion");
        assertThat(answer.get("model").asString()).as("the model that answered").isEqualTo("scripted");
        assertThat(answer.get("created").asLong()).isGreaterThan(1_700_000_000L);
        assertThat(answer.at("/choices/0/message/role").asString()).isEqualTo("assistant");
        assertThat(answer.at("/choices/0/message/content").asString()).isEqualTo("Hello, world");
        assertThat(answer.at("/choices/0/finish_reason").asString()).isEqualTo("stop");
        assertThat(answer.at("/usage/completion_tokens").asInt()).isEqualTo(3);
        assertThat(answer.at("/usage/total_tokens").asInt()).isEqualTo(6);
    }

    @Test
    void streamIsFramedExactlyAsOpenAiWithoutUsageUnlessAsked() {
        List<String> events = events(streamBody(chat("test-model", "\"stream\": true")));
        assertThat(events.getLast()).isEqualTo("[DONE]");
        assertThat(events).filteredOn("[DONE]"::equals).hasSize(1);
        List<JsonNode> chunks = events.subList(0, events.size() - 1).stream().map(GatewayTestSupport::json).toList();
        assertThat(chunks).hasSize(5); // role, three tokens, finish
        String id = chunks.getFirst().get("id").asString();
        assertThat(id).startsWith("chatcmpl-");
        assertThat(chunks).allSatisfy(c -> {
            assertThat(c.get("id").asString()).isEqualTo(id);
            assertThat(c.get("object").asString()).isEqualTo("chat.completion.chunk");
            assertThat(c.get("model").asString()).isEqualTo("scripted");
            assertThat(c.has("usage")).isFalse();
            assertThat(c.get("choices")).isNotEmpty();
        });
        assertThat(chunks.stream().map(c -> c.at("/choices/0/delta/content").asString("")))
                .containsExactly("", "Hello", ",", " world", "");
        assertThat(chunks.getLast().at("/choices/0/finish_reason").asString()).isEqualTo("stop");
    }

    /**
     * Each event reaches the client as the backend sends it, not when the stream ends: the writer flushes
     * whenever what came has been written, not once per event, and must never hold one back.
     */
    @Test
    void eachEventReachesTheClientAsItComes() throws Exception {
        String body = chat("test-model", "\"stream\": true, \"script\": {\"*\": {\"tokens\": [\"a\", \"b\", \"c\"], "
                + "\"delay_ms\": 600, \"flush-key\": 1}}");
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
                .header("Content-Type", "application/json")
                .header("Authorization", "Bearer " + API_KEY)
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        try (HttpClient client = HttpClient.newHttpClient()) {
            HttpResponse<Stream<String>> response = client.send(request, HttpResponse.BodyHandlers.ofLines());
            assertThat(response.statusCode()).isEqualTo(200);
            List<long[]> arrivals = new ArrayList<>(); // {kind, nanos}: 0 the first token, 1 [DONE]
            response.body().forEach(line -> {
                if (line.contains("\"content\":\"a\"")) {
                    arrivals.add(new long[] {0, System.nanoTime()});
                } else if (line.equals("data: [DONE]")) {
                    arrivals.add(new long[] {1, System.nanoTime()});
                }
            });
            assertThat(arrivals).extracting(a -> a[0]).containsExactly(0L, 1L);
            // Three gaps of 600 ms come after the first token; a stream held back until its end shows ~0 here.
            assertThat(Duration.ofNanos(arrivals.get(1)[1] - arrivals.get(0)[1])).isGreaterThan(Duration.ofMillis(900));
        }
    }

    @Test
    void includeUsageAddsOneFinalChunkWithEmptyChoices() {
        List<String> events = events(streamBody(chat("test-model",
                "\"stream\": true, \"stream_options\": {\"include_usage\": true}")));
        assertThat(events.getLast()).isEqualTo("[DONE]");
        JsonNode usageChunk = json(events.get(events.size() - 2));
        assertThat(usageChunk.get("choices")).isEmpty();
        assertThat(usageChunk.at("/usage/completion_tokens").asInt()).isEqualTo(3);
        assertThat(events.subList(0, events.size() - 2)).allSatisfy(e -> assertThat(json(e).has("usage")).isFalse());
    }

    @Test
    void usageOnAContentChunkIsSplitOffOrStripped() {
        String script = "\"script\": {\"*\": {\"usage_on_last\": true}}";
        List<String> withUsage = events(streamBody(chat("test-model",
                "\"stream\": true, \"stream_options\": {\"include_usage\": true}, " + script)));
        JsonNode finish = json(withUsage.get(withUsage.size() - 3));
        assertThat(finish.at("/choices/0/finish_reason").asString()).isEqualTo("stop");
        assertThat(finish.has("usage")).isFalse();
        assertThat(json(withUsage.get(withUsage.size() - 2)).get("choices")).isEmpty();

        List<String> without = events(streamBody(chat("test-model", "\"stream\": true, " + script)));
        assertThat(without.subList(0, without.size() - 1))
                .allSatisfy(e -> assertThat(json(e).has("usage")).isFalse());
    }

    @Test
    void unknownFieldsReachTheBackendUntouched() {
        post("/v1/chat/completions", chat("test-model",
                "\"top_k\": 40, \"grammar\": \"root ::= \\\"yes\\\"\", \"cache_prompt\": true, \"user\": \"extras\""))
                .expectStatus().isOk();
        ChatCompletionRequest seen = backend("alpha").lastChat();
        assertThat(seen.user()).isEqualTo("extras");
        assertThat(seen.extra()).containsEntry("top_k", 40).containsEntry("grammar", "root ::= \"yes\"")
                .containsEntry("cache_prompt", true);
        assertThat(seen.isStream()).as("backends are always called as a usage stream").isTrue();
        assertThat(seen.wantsUsageInStream()).isTrue();
    }

    /** Strict binding of known fields must not touch unknown ones: an extra keeps the JSON type it came with. */
    @Test
    void unknownFieldsKeepTheirJsonTypes() {
        post("/v1/chat/completions", chat("test-model",
                "\"top_k\": \"40\", \"min_p\": 1, \"mirostat\": 2.0, \"cache_prompt\": 1, \"n_probs\": true"))
                .expectStatus().isOk();
        assertThat(backend("alpha").lastChat().extra()).containsEntry("top_k", "40").containsEntry("min_p", 1)
                .containsEntry("mirostat", 2.0).containsEntry("cache_prompt", 1).containsEntry("n_probs", true);
    }

    /** An integer is a valid JSON number: {@code "temperature": 1} is not a type error. */
    @Test
    void integersAreAcceptedForNumberFields() {
        post("/v1/chat/completions", chat("test-model", "\"temperature\": 1, \"top_p\": 1, \"presence_penalty\": 0"))
                .expectStatus().isOk();
        assertThat(backend("alpha").lastChat().temperature()).isEqualTo(1.0);
    }

    @Test
    void backendIsCalledWithItsOwnModelNameAndClientSeesWhatServed() {
        JsonNode answer = json(post("/v1/chat/completions", chat("mapped-model", ""))
                .expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody());
        assertThat(answer.get("model").asString()).isEqualTo("inner-name");
        assertThat(backend("mapped").lastChat().model()).isEqualTo("inner-name");
    }

    @Test
    void failureBeforeTheFirstTokenFailsOverToTheNextBackend() {
        int betaCalls = backend("beta").calls();
        JsonNode answer = json(post("/v1/chat/completions", chat("test-model",
                "\"script\": {\"alpha\": {\"fail\": \"UNAVAILABLE\"}, \"beta\": {\"tokens\": [\"from beta\"]}}"))
                .expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody());
        assertThat(answer.at("/choices/0/message/content").asString()).isEqualTo("from beta");
        assertThat(backend("beta").calls()).isEqualTo(betaCalls + 1);
    }

    /** Issue 14, finding 5: with one backend, a passing 5xx or 429 before the first token is tried again. */
    @Test
    void aSingleBackendsPassing5xxOr429IsTriedAgainInsteadOfReachingTheClient() {
        JsonNode answer = json(post("/v1/chat/completions", chat("mapped-model",
                "\"script\": {\"*\": {\"fail\": \"UPSTREAM\", \"fail_calls\": 1, \"key\": \"5xx-once\"}}"))
                .expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody());
        assertThat(answer.at("/choices/0/message/content").asString()).isEqualTo("Hello, world");
        List<String> events = events(streamBody(chat("mapped-model", "\"stream\": true, \"script\": {\"*\": "
                + "{\"fail\": \"OVERLOADED\", \"retry_after_seconds\": 1, \"fail_calls\": 1, \"key\": \"429-once\"}}")));
        assertThat(events.getLast()).isEqualTo("[DONE]");
        assertThat(events).noneSatisfy(e -> assertThat(e).contains("\"error\""));
    }

    @Test
    void streamingFailsOverBeforeTheFirstTokenToo() {
        List<String> events = events(streamBody(chat("test-model", "\"stream\": true, "
                + "\"script\": {\"alpha\": {\"fail\": \"TIMEOUT\"}, \"beta\": {\"tokens\": [\"B\"]}}")));
        assertThat(events).anySatisfy(e -> assertThat(e).contains("\"content\":\"B\""));
        assertThat(events).noneSatisfy(e -> assertThat(e).contains("\"error\""));
    }

    @Test
    void invalidRequestFromABackendIsAnsweredAtOnceWithoutFailover() {
        int betaCalls = backend("beta").calls();
        String body = post("/v1/chat/completions", chat("test-model",
                "\"script\": {\"alpha\": {\"fail\": \"INVALID_REQUEST\"}}"))
                .expectStatus().isBadRequest().expectBody(String.class).returnResult().getResponseBody();
        assertThat(json(body).at("/error/type").asString()).isEqualTo("invalid_request_error");
        assertThat(json(body).at("/error/param").asString()).isEqualTo("messages");
        assertThat(backend("beta").calls()).isEqualTo(betaCalls);
    }

    @Test
    void everyBackendDownGives503WithRetryAfter() {
        String body = post("/v1/chat/completions", chat("test-model",
                "\"script\": {\"*\": {\"fail\": \"UNAVAILABLE\"}}"))
                .expectStatus().isEqualTo(503)
                .expectHeader().valueEquals("Retry-After", "7")
                .expectBody(String.class).returnResult().getResponseBody();
        JsonNode error = json(body).get("error");
        assertThat(error.get("type").asString()).isEqualTo("server_error");
        assertThat(error.get("code").asString()).isEqualTo("service_unavailable");
        assertThat(error.get("message").asString()).contains("alpha", "beta");
        assertThat(error.has("param")).isTrue();
    }

    @Test
    void everyBackendOverloadedGives429WithTheirRetryAfter() {
        post("/v1/chat/completions", chat("test-model",
                "\"script\": {\"alpha\": {\"fail\": \"OVERLOADED\", \"retry_after_seconds\": 3},"
                        + " \"beta\": {\"fail\": \"OVERLOADED\", \"retry_after_seconds\": 11}}"))
                .expectStatus().isEqualTo(429)
                .expectHeader().valueEquals("Retry-After", "11")
                .expectBody()
                .jsonPath("$.error.type").isEqualTo("rate_limit_error")
                .jsonPath("$.error.code").isEqualTo("rate_limit_exceeded")
                .jsonPath("$.error.message").value(String.class, message -> assertThat(message)
                        .as("the backend's own words stay in the log").doesNotContain("scripted"));
    }

    @ParameterizedTest
    @CsvSource({
            "INVALID_REQUEST, 400, invalid_request_error, ",
            "CONTEXT_LENGTH_EXCEEDED, 400, invalid_request_error, context_length_exceeded",
            "MODEL_NOT_FOUND, 404, invalid_request_error, model_not_found",
            "OVERLOADED, 429, rate_limit_error, rate_limit_exceeded",
            "UNAVAILABLE, 503, server_error, service_unavailable",
            "TIMEOUT, 503, server_error, service_unavailable",
            "UPSTREAM, 503, server_error, service_unavailable",
            "INTERNAL, 503, server_error, service_unavailable"})
    void eachBackendErrorKindMapsToStatusTypeAndCode(String kind, int status, String type, String code) {
        // One backend route: request-side kinds keep their own status, backend faults become 503.
        String body = post("/v1/chat/completions", chat("mapped-model",
                "\"script\": {\"*\": {\"fail\": \"" + kind + "\"}}"))
                .expectStatus().isEqualTo(status)
                .expectBody(String.class).returnResult().getResponseBody();
        JsonNode error = json(body).get("error");
        assertThat(error.get("type").asString()).isEqualTo(type);
        assertThat(error.get("code").isNull() ? null : error.get("code").asString()).isEqualTo(code);
        assertThat(body).doesNotContain("Exception", "at dev.");
    }

    @Test
    void failureAfterTheFirstTokenBecomesAnErrorEventThenDone() {
        List<String> events = events(streamBody(chat("test-model", "\"stream\": true, "
                + "\"script\": {\"alpha\": {\"fail\": \"INTERNAL\", \"fail_after\": 2}}")));
        assertThat(events.getLast()).isEqualTo("[DONE]");
        assertThat(events).filteredOn("[DONE]"::equals).hasSize(1);
        JsonNode error = json(events.get(events.size() - 2)).get("error");
        assertThat(error.get("type").asString()).isEqualTo("server_error");
        assertThat(error.get("code").asString()).isEqualTo("internal_error");
        assertThat(error.get("message").asString()).doesNotContain("scripted");
        assertThat(events.get(1)).contains("Hello");
    }

    @Test
    void failureAfterTheFirstTokenOfANonStreamingRequestIsAnHttpError() {
        post("/v1/chat/completions", chat("test-model",
                "\"script\": {\"alpha\": {\"fail\": \"UPSTREAM\", \"fail_after\": 1}}"))
                .expectStatus().isEqualTo(502)
                .expectBody().jsonPath("$.error.code").isEqualTo("bad_gateway")
                .jsonPath("$.error.message").isEqualTo("The backend serving this model failed while answering.");
    }
}
