package dev.lazarus.backend.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.CompletionRequest;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class WireTypesJsonTest {

    private final JsonMapper json = JsonMapper.builder().build();

    @Test
    void unknownRequestFieldsSurviveARoundTrip() {
        String body = """
                {"model":"m","messages":[{"role":"user","content":"hi"}],
                 "top_k":40,"min_p":0.05,"grammar":"root ::= \\"a\\"","cache_prompt":true,
                 "stop":"END","max_tokens":7,"stream_options":{"include_usage":true}}""";
        ChatCompletionRequest r = json.readValue(body, ChatCompletionRequest.class);
        assertThat(r.extra()).containsEntry("top_k", 40).containsEntry("cache_prompt", true)
                .containsKey("min_p").containsKey("grammar");
        assertThat(r.stop()).containsExactly("END");
        assertThat(r.effectiveMaxTokens()).isEqualTo(7);
        assertThat(r.wantsUsageInStream()).isTrue();

        JsonNode back = json.readTree(json.writeValueAsString(r.withModel("upstream")));
        assertThat(back.get("model").asString()).isEqualTo("upstream");
        assertThat(back.get("top_k").asInt()).isEqualTo(40);
        assertThat(back.get("grammar").asString()).isEqualTo("root ::= \"a\"");
        assertThat(back.has("extra")).isFalse();
        assertThat(back.has("temperature")).isFalse();
    }

    @Test
    void contentAsStringOrPartsKeepsItsShape() {
        String body = """
                {"model":"m","messages":[
                  {"role":"system","content":"be brief"},
                  {"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"data:x"}},{"type":"text","text":"b"}]}]}""";
        ChatCompletionRequest r = json.readValue(body, ChatCompletionRequest.class);
        assertThat(r.messages().get(0).text()).isEqualTo("be brief");
        assertThat(r.messages().get(1).text()).isEqualTo("ab");
        assertThat(r.messages().get(1).content().hasNonTextParts()).isTrue();
        JsonNode back = json.readTree(json.writeValueAsString(r));
        assertThat(back.at("/messages/0/content").isString()).isTrue();
        assertThat(back.at("/messages/1/content/1/image_url/url").asString()).isEqualTo("data:x");
    }

    @Test
    void malformedContentIsRejected() {
        assertThatThrownBy(() -> json.readValue("{\"messages\":[{\"role\":\"user\",\"content\":42}]}",
                ChatCompletionRequest.class)).hasMessageContaining("content");
    }

    @Test
    void chunkSerialisesFinishReasonNullAndEmptyChoices() {
        var chunk = ChatCompletionChunk.of("id1", 1, "m",
                List.of(new ChatCompletionChunk.Choice(0, ChatCompletionChunk.Delta.content("x"), null, null)), null);
        JsonNode n = json.readTree(json.writeValueAsString(chunk));
        assertThat(n.at("/choices/0").has("finish_reason")).isTrue();
        assertThat(n.at("/choices/0/finish_reason").isNull()).isTrue();
        assertThat(n.has("usage")).isFalse();
        var usageChunk = ChatCompletionChunk.of("id1", 1, "m", List.of(), dev.lazarus.backend.api.openai.Usage.of(3, 4));
        JsonNode u = json.readTree(json.writeValueAsString(usageChunk));
        assertThat(u.get("choices").isArray()).isTrue();
        assertThat(u.get("choices").size()).isZero();
        assertThat(u.at("/usage/total_tokens").asInt()).isEqualTo(7);
    }

    @Test
    void upstreamChunkExtrasArePreserved() {
        String s = "{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":5,\"model\":\"m\",\"choices\":[],"
                + "\"timings\":{\"predicted_per_second\":12.5}}";
        ChatCompletionChunk c = json.readValue(s, ChatCompletionChunk.class);
        assertThat(c.extra()).containsKey("timings");
        assertThat(((Map<?, ?>) c.extra().get("timings")).get("predicted_per_second")).isEqualTo(12.5);
    }

    @Test
    void legacyPromptForms() {
        assertThat(json.readValue("{\"model\":\"m\",\"prompt\":\"abc\"}", CompletionRequest.class).promptText()).isEqualTo("abc");
        assertThat(json.readValue("{\"model\":\"m\",\"prompt\":[\"abc\"]}", CompletionRequest.class).promptText()).isEqualTo("abc");
        assertThat(json.readValue("{\"model\":\"m\",\"prompt\":[1,2]}", CompletionRequest.class).promptText()).isNull();
    }
}
