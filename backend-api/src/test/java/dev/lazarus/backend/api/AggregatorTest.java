package dev.lazarus.backend.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.openai.ChatCompletion;
import dev.lazarus.backend.api.openai.ChatCompletionAggregator;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionChunk.Choice;
import dev.lazarus.backend.api.openai.ChatCompletionChunk.Delta;
import dev.lazarus.backend.api.openai.ToolCall;
import dev.lazarus.backend.api.openai.Usage;
import java.util.List;
import org.junit.jupiter.api.Test;

class AggregatorTest {

    @Test
    void contentToolCallsFinishAndUsageAreFolded() {
        var agg = new ChatCompletionAggregator();
        agg.add(ChatCompletionChunk.of("c1", 9, "m", List.of(new Choice(0, Delta.role("assistant"), null, null)), null));
        agg.add(ChatCompletionChunk.of("c1", 9, "m", List.of(new Choice(0, Delta.content("Hel"), null, null)), null));
        agg.add(ChatCompletionChunk.of("c1", 9, "m", List.of(new Choice(0, Delta.content("lo"), null, null)), null));
        agg.add(ChatCompletionChunk.of("c1", 9, "m", List.of(new Choice(0, new Delta(null, null, null,
                List.of(new ToolCall(0, "call_1", "function", new ToolCall.FunctionCall("get", "{\"a\":")))), null, null)), null));
        agg.add(ChatCompletionChunk.of("c1", 9, "m", List.of(new Choice(0, new Delta(null, null, null,
                List.of(new ToolCall(0, null, null, new ToolCall.FunctionCall(null, "1}")))), null, "tool_calls")), null));
        agg.add(ChatCompletionChunk.of("c1", 9, "m", List.of(), Usage.of(5, 3)));

        ChatCompletion r = agg.result();
        assertThat(r.id()).isEqualTo("c1");
        assertThat(r.object()).isEqualTo("chat.completion");
        assertThat(r.choices()).hasSize(1);
        ChatCompletion.Choice c = r.choices().getFirst();
        assertThat(c.message().role()).isEqualTo("assistant");
        assertThat(c.message().text()).isEqualTo("Hello");
        assertThat(c.message().toolCalls()).singleElement().satisfies(t -> {
            assertThat(t.id()).isEqualTo("call_1");
            assertThat(t.function().name()).isEqualTo("get");
            assertThat(t.function().arguments()).isEqualTo("{\"a\":1}");
        });
        assertThat(c.finishReason()).isEqualTo("tool_calls");
        assertThat(r.usage().totalTokens()).isEqualTo(8);
    }
}
