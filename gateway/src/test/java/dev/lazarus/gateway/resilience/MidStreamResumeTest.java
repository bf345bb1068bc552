package dev.lazarus.gateway.resilience;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.gateway.testing.GatewayTestSupport;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/** Mid-stream resume through the HTTP API, with scripted backends: what the client and the next backend see. */
class MidStreamResumeTest extends GatewayTestSupport {

    private static final String SCRIPT = "\"script\": {\"alpha\": {\"fail\": \"UPSTREAM\", \"fail_after\": 2},"
            + " \"beta\": {\"tokens\": [\" there\", \"!\"]}}";

    private static String chat(String model, String extra) {
        return "{\"model\": \"" + model + "\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}],"
                + " \"max_tokens\": 10, " + extra + "}";
    }

    private String streamBody(String body) {
        return post("/v1/chat/completions", body).expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
    }

    @Test
    void aStreamGoesOnOnTheNextBackendAsOneAnswer() {
        List<String> events = events(streamBody(chat("resume-model",
                "\"stream\": true, \"stream_options\": {\"include_usage\": true}, " + SCRIPT)));
        assertThat(events.getLast()).isEqualTo("[DONE]");
        assertThat(events).filteredOn("[DONE]"::equals).hasSize(1);
        List<JsonNode> chunks = events.subList(0, events.size() - 1).stream().map(GatewayTestSupport::json).toList();
        assertThat(chunks).noneMatch(c -> c.has("error"));

        Set<String> ids = new HashSet<>();
        Set<Long> created = new HashSet<>();
        chunks.forEach(c -> {
            ids.add(c.get("id").asString());
            created.add(c.get("created").asLong());
            assertThat(c.get("model").asString()).isEqualTo("scripted");
        });
        assertThat(ids).hasSize(1);
        assertThat(created).hasSize(1);
        assertThat(chunks).filteredOn(c -> c.at("/choices/0/delta/role").isString()).hasSize(1);
        assertThat(chunks).filteredOn(c -> c.at("/choices/0/finish_reason").isString()).hasSize(1);
        assertThat(chunks).filteredOn(c -> c.at("/choices/0/index").isNumber())
                .allSatisfy(c -> assertThat(c.at("/choices/0/index").asInt()).isZero());
        StringBuilder text = new StringBuilder();
        chunks.forEach(c -> text.append(c.at("/choices/0/delta/content").asString("")));
        assertThat(text.toString()).isEqualTo("Hello, there!");

        // beta reports 3 prompt + 2 completion tokens for its part; alpha had generated 2.
        JsonNode usage = chunks.getLast().get("usage");
        assertThat(chunks.getLast().get("choices")).isEmpty();
        assertThat(usage.get("completion_tokens").asInt()).isEqualTo(4);
        assertThat(usage.get("prompt_tokens").asInt()).isEqualTo(1);
        assertThat(usage.get("total_tokens").asInt()).isEqualTo(5);

        ChatCompletionRequest continued = backend("beta").lastChat();
        assertThat(continued.messages()).hasSize(2);
        assertThat(continued.messages().getLast()).isEqualTo(ChatMessage.assistant("Hello,"));
        assertThat(continued.maxTokens()).isEqualTo(8);
    }

    @Test
    void aNonStreamingRequestGetsTheWholeAnswer() {
        byte[] body = post("/v1/chat/completions", chat("resume-model", SCRIPT))
                .expectStatus().isOk().expectBody().returnResult().getResponseBody();
        JsonNode answer = JSON.readTree(body);
        assertThat(answer.at("/choices/0/message/content").asString()).isEqualTo("Hello, there!");
        assertThat(answer.at("/choices/0/finish_reason").asString()).isEqualTo("stop");
        assertThat(answer.at("/usage/completion_tokens").asInt()).isEqualTo(4);
    }

    @Test
    void legacyCompletionsResumeWithTheTextAppendedToThePrompt() {
        String body = "{\"model\": \"resume-model\", \"prompt\": \"Once\", \"max_tokens\": 10, \"stream\": true, "
                + SCRIPT + "}";
        String stream = post("/v1/completions", body).expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
        StringBuilder text = new StringBuilder();
        events(stream).stream().filter(e -> !e.equals("[DONE]")).map(GatewayTestSupport::json)
                .forEach(c -> text.append(c.at("/choices/0/text").asString("")));
        assertThat(text.toString()).isEqualTo("Hello, there!");
        assertThat(backend("beta").lastCompletion().prompt()).isEqualTo("OnceHello,");
        assertThat(backend("beta").lastCompletion().maxTokens()).isEqualTo(8);
    }

    @Test
    void inErrorModeTheClientGetsAnErrorEvent() {
        List<String> events = events(streamBody(chat("test-model", "\"stream\": true, " + SCRIPT)));
        assertThat(events.getLast()).isEqualTo("[DONE]");
        JsonNode error = json(events.get(events.size() - 2)).get("error");
        assertThat(error.get("code").asString()).isEqualTo("bad_gateway");
        assertThat(events).noneMatch(e -> e.contains("there"));
    }

    @Test
    void whenTheContinuationFailsTooTheStreamEndsWithAnErrorEvent() {
        List<String> events = events(streamBody(chat("resume-model", "\"stream\": true, "
                + "\"script\": {\"alpha\": {\"fail\": \"UPSTREAM\", \"fail_after\": 2},"
                + " \"beta\": {\"fail\": \"UNAVAILABLE\"}}")));
        assertThat(events.getLast()).isEqualTo("[DONE]");
        assertThat(events).filteredOn("[DONE]"::equals).hasSize(1);
        assertThat(json(events.get(events.size() - 2)).get("error").get("type").asString()).isEqualTo("server_error");
    }
}
