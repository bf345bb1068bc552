package dev.lazarus.gateway.api.anthropic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.openai.ChatCompletion;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionChunk.Choice;
import dev.lazarus.backend.api.openai.ChatCompletionChunk.Delta;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.MessageContent;
import dev.lazarus.backend.api.openai.ToolCall;
import dev.lazarus.backend.api.openai.Usage;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

class MessagesStreamTranslatorTest {

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object value) {
        return (Map<String, Object>) value;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Object value) {
        return (List<Object>) value;
    }

    private static ChatCompletionChunk delta(Delta delta, String finish) {
        return ChatCompletionChunk.of("c", 1, "m", List.of(new Choice(0, delta, null, finish)), null);
    }

    private static ChatCompletionChunk usage(int prompt, int completion) {
        return ChatCompletionChunk.of("c", 1, "m", List.of(), new Usage(prompt, completion, prompt + completion,
                Map.of("cached_tokens", 2), null));
    }

    private static List<MessagesEvent> translate(ChatCompletionChunk... chunks) {
        MessagesStreamTranslator translator = new MessagesStreamTranslator("msg_1", "m");
        List<MessagesEvent> events = new ArrayList<>();
        for (ChatCompletionChunk chunk : chunks) {
            events.addAll(translator.onChunk(chunk));
        }
        events.addAll(translator.finish());
        return events;
    }

    @Test
    void reasoningTextAndToolCallsBecomeBlocksInAnthropicsOrder() {
        List<MessagesEvent> events = translate(
                delta(Delta.role("assistant"), null),
                delta(new Delta(null, null, "Think", null), null),
                delta(new Delta(null, null, "ing.", null), null),
                delta(Delta.content("Hi"), null),
                delta(Delta.content(" there"), null),
                delta(new Delta(null, null, null, List.of(new ToolCall(0, "call_1", "function",
                        new ToolCall.FunctionCall("get_weather", "")))), null),
                delta(new Delta(null, null, null, List.of(new ToolCall(0, null, null,
                        new ToolCall.FunctionCall(null, "{\"city\":")))), null),
                delta(new Delta(null, null, null, List.of(new ToolCall(0, null, null,
                        new ToolCall.FunctionCall(null, "\"Paris\"}")))), null),
                delta(new Delta(null, null, null, List.of(new ToolCall(1, "call_2", "function",
                        new ToolCall.FunctionCall("get_time", "{}")))), "tool_calls"),
                usage(10, 7));
        assertThat(events).extracting(MessagesEvent::name).containsExactly(
                "message_start", "ping",
                "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
                "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
                "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
                "content_block_start", "content_block_delta", "content_block_stop",
                "message_delta", "message_stop");
        assertThat(events).allSatisfy(e -> assertThat(e.data().get("type")).isEqualTo(e.name()));
        Map<String, Object> start = events.get(0).data();
        assertThat(map(start.get("message"))).containsEntry("id", "msg_1").containsEntry("role", "assistant")
                .containsEntry("content", List.of());
        assertThat(events.get(2).data()).containsEntry("index", 0)
                .containsEntry("content_block", Map.of("type", "thinking", "thinking", "", "signature", ""));
        assertThat(events.get(3).data().get("delta")).isEqualTo(Map.of("type", "thinking_delta", "thinking", "Think"));
        assertThat(events.get(6).data()).containsEntry("index", 1)
                .containsEntry("content_block", Map.of("type", "text", "text", ""));
        assertThat(events.get(7).data().get("delta")).isEqualTo(Map.of("type", "text_delta", "text", "Hi"));
        assertThat(events.get(10).data()).containsEntry("index", 2);
        assertThat(map(events.get(10).data().get("content_block"))).containsEntry("type", "tool_use")
                .containsEntry("id", "call_1").containsEntry("name", "get_weather").containsEntry("input", Map.of());
        assertThat(events.get(11).data().get("delta"))
                .isEqualTo(Map.of("type", "input_json_delta", "partial_json", "{\"city\":"));
        assertThat(events.get(14).data()).containsEntry("index", 3);
        assertThat(events.get(16).data()).containsEntry("index", 3);
        Map<String, Object> end = events.get(17).data();
        assertThat(map(end.get("delta"))).containsEntry("stop_reason", "tool_use");
        assertThat(map(end.get("usage"))).containsEntry("input_tokens", 8)
                .containsEntry("cache_read_input_tokens", 2).containsEntry("output_tokens", 7);
    }

    @Test
    void aResumedStreamIsOneMessage() {
        List<MessagesEvent> events = translate(
                delta(Delta.role("assistant"), null), delta(Delta.content("Hel"), null),
                delta(Delta.role("assistant"), null), delta(Delta.content("lo"), "length"), usage(3, 2));
        assertThat(events).extracting(MessagesEvent::name).containsExactly("message_start", "ping",
                "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
                "message_delta", "message_stop");
        assertThat(map(events.get(6).data().get("delta"))).containsEntry("stop_reason", "max_tokens");
    }

    @Test
    void anEmptyAnswerStillFramesAMessage() {
        assertThat(translate(usage(3, 0))).extracting(MessagesEvent::name)
                .containsExactly("message_start", "ping", "message_delta", "message_stop");
    }

    @Test
    void aWholeAnswerBecomesAMessageWithItsBlocks() {
        MessageAnswerTranslator answers = new MessageAnswerTranslator(JsonMapper.builder().build());
        ChatMessage message = new ChatMessage("assistant", MessageContent.ofText("Checking."), null,
                List.of(new ToolCall(0, "call_9", "function", new ToolCall.FunctionCall("get_weather",
                        "{\"city\": \"Oslo\"}"))), null, "Need data.", null);
        Map<String, Object> out = answers.toMessage("msg_2", "m", new ChatCompletion("c", ChatCompletion.OBJECT, 1,
                "m", null, List.of(new ChatCompletion.Choice(0, message, null, "tool_calls")), Usage.of(5, 4), null));
        assertThat(out).containsEntry("id", "msg_2").containsEntry("type", "message").containsEntry("role", "assistant")
                .containsEntry("model", "m").containsEntry("stop_reason", "tool_use")
                .containsEntry("stop_sequence", null)
                .containsEntry("usage", Map.of("input_tokens", 5, "cache_read_input_tokens", 0, "output_tokens", 4));
        assertThat(list(out.get("content"))).containsExactly(
                Map.of("type", "thinking", "thinking", "Need data.", "signature", ""),
                Map.of("type", "text", "text", "Checking."),
                Map.of("type", "tool_use", "id", "call_9", "name", "get_weather", "input", Map.of("city", "Oslo")));
        Map<String, Object> plain = answers.toMessage("msg_3", "m", new ChatCompletion("c", ChatCompletion.OBJECT, 1,
                "m", null, List.of(new ChatCompletion.Choice(0, ChatMessage.assistant("Hi"), null, "stop")),
                Usage.of(1, 1), null));
        assertThat(plain).containsEntry("stop_reason", "end_turn");
    }

    /** The client's own limit reached is max_tokens; the gateway's cap below it ends the turn (lazarus.messages.max-tokens). */
    @Test
    void aLengthStopIsTheEndOfTheTurnWhenTheGatewaysCapEndedIt() {
        for (boolean capped : new boolean[] {false, true}) {
            MessagesStreamTranslator translator = new MessagesStreamTranslator("msg_4", "m", capped);
            translator.onChunk(delta(Delta.content("Hi"), "length"));
            Map<String, Object> delta = map(translator.finish().stream()
                    .filter(e -> e.name().equals("message_delta")).findFirst().orElseThrow().data().get("delta"));
            assertThat(delta.get("stop_reason")).isEqualTo(capped ? "end_turn" : "max_tokens");
            Map<String, Object> whole = new MessageAnswerTranslator(JsonMapper.builder().build()).toMessage("msg_5", "m",
                    new ChatCompletion("c", ChatCompletion.OBJECT, 1, "m", null, List.of(new ChatCompletion.Choice(0,
                            ChatMessage.assistant("Hi"), null, "length")), Usage.of(1, 1), null), capped, null);
            assertThat(whole.get("stop_reason")).isEqualTo(capped ? "end_turn" : "max_tokens");
        }
    }
}
