package dev.lazarus.gateway.api.responses;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionChunk.Choice;
import dev.lazarus.backend.api.openai.ChatCompletionChunk.Delta;
import dev.lazarus.backend.api.openai.ToolCall;
import dev.lazarus.backend.api.openai.Usage;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

class ResponseStreamTranslatorTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private final ResponseObjects objects = new ResponseObjects(JSON);

    private ResponseStreamTranslator translator(String request) {
        return new ResponseStreamTranslator(JSON, objects,
                objects.start((ObjectNode) JSON.readTree(request), "resp_1", 1_800_000_000L, "m"));
    }

    private static ChatCompletionChunk chunk(Delta delta, String finish) {
        return ChatCompletionChunk.of("c", 1, "m", List.of(new Choice(0, delta, null, finish)), null);
    }

    private static ChatCompletionChunk usage(Usage usage) {
        return ChatCompletionChunk.of("c", 1, "m", List.of(), usage);
    }

    private static List<ObjectNode> run(ResponseStreamTranslator translator, ChatCompletionChunk... chunks) {
        List<ObjectNode> events = new ArrayList<>();
        for (ChatCompletionChunk chunk : chunks) {
            events.addAll(translator.onChunk(chunk));
        }
        events.addAll(translator.complete());
        return events;
    }

    @Test
    void reasoningThenTextComeAsTwoItemsInOpenAisOrderWithConsecutiveSequenceNumbers() {
        ResponseStreamTranslator translator = translator("{\"model\":\"m\",\"input\":\"x\",\"temperature\":0.5}");
        Usage usage = new Usage(10, 7, 17, Map.of("cached_tokens", 4), Map.of("reasoning_tokens", 3));
        List<ObjectNode> events = run(translator,
                chunk(Delta.role("assistant"), null),
                chunk(new Delta(null, null, "Let me", null), null),
                chunk(new Delta(null, null, " think.", null), null),
                chunk(Delta.content("Hello"), null),
                chunk(Delta.content(" world"), null),
                chunk(new Delta(null, null, null, null), "stop"),
                usage(usage));
        assertThat(events).extracting(e -> e.get("type").stringValue()).containsExactly(
                "response.created", "response.in_progress",
                "response.output_item.added", "response.content_part.added",
                "response.reasoning_text.delta", "response.reasoning_text.delta",
                "response.reasoning_text.done", "response.content_part.done", "response.output_item.done",
                "response.output_item.added", "response.content_part.added",
                "response.output_text.delta", "response.output_text.delta",
                "response.output_text.done", "response.content_part.done", "response.output_item.done",
                "response.completed");
        for (int i = 0; i < events.size(); i++) {
            assertThat(events.get(i).get("sequence_number").intValue()).isEqualTo(i);
        }
        assertThat(events.get(0).at("/response/status").stringValue()).isEqualTo("in_progress");
        assertThat(events.get(0).at("/response/temperature").doubleValue()).isEqualTo(0.5);
        String messageId = events.get(9).at("/item/id").stringValue();
        assertThat(messageId).startsWith("msg_");
        assertThat(events.get(11).get("item_id").stringValue()).isEqualTo(messageId);
        assertThat(events.get(11).get("output_index").intValue()).isEqualTo(1);
        assertThat(events.get(13).get("text").stringValue()).isEqualTo("Hello world");

        JsonNode response = events.getLast().get("response");
        assertThat(response).isEqualTo(translator.response());
        assertThat(response.get("id").stringValue()).isEqualTo("resp_1");
        assertThat(response.get("object").stringValue()).isEqualTo("response");
        assertThat(response.get("status").stringValue()).isEqualTo("completed");
        assertThat(response.at("/output/0/type").stringValue()).isEqualTo("reasoning");
        assertThat(response.at("/output/0/content/0/text").stringValue()).isEqualTo("Let me think.");
        assertThat(response.at("/output/1/type").stringValue()).isEqualTo("message");
        assertThat(response.at("/output/1/status").stringValue()).isEqualTo("completed");
        assertThat(response.at("/output/1/content/0/type").stringValue()).isEqualTo("output_text");
        assertThat(response.at("/output/1/content/0/text").stringValue()).isEqualTo("Hello world");
        assertThat(response.at("/usage/input_tokens").intValue()).isEqualTo(10);
        assertThat(response.at("/usage/input_tokens_details/cached_tokens").intValue()).isEqualTo(4);
        assertThat(response.at("/usage/output_tokens").intValue()).isEqualTo(7);
        assertThat(response.at("/usage/output_tokens_details/reasoning_tokens").intValue()).isEqualTo(3);
        assertThat(response.at("/usage/total_tokens").intValue()).isEqualTo(17);
    }

    @Test
    void aToolCallStreamsItsArgumentsAndEndsAsAFunctionCallItem() {
        ResponseStreamTranslator translator = translator("{\"model\":\"m\",\"input\":\"x\"}");
        List<ObjectNode> events = run(translator,
                chunk(new Delta("assistant", null, null, List.of(new ToolCall(0, "call_9", "function",
                        new ToolCall.FunctionCall("weather", "")))), null),
                chunk(new Delta(null, null, null, List.of(new ToolCall(0, null, null,
                        new ToolCall.FunctionCall(null, "{\"city\":")))), null),
                chunk(new Delta(null, null, null, List.of(new ToolCall(0, null, null,
                        new ToolCall.FunctionCall(null, "\"Paris\"}")))), null),
                chunk(new Delta(null, null, null, null), "tool_calls"),
                usage(Usage.of(5, 6)));
        assertThat(events).extracting(e -> e.get("type").stringValue()).containsExactly(
                "response.created", "response.in_progress", "response.output_item.added",
                "response.function_call_arguments.delta", "response.function_call_arguments.delta",
                "response.function_call_arguments.done", "response.output_item.done", "response.completed");
        assertThat(events.get(2).at("/item/call_id").stringValue()).isEqualTo("call_9");
        assertThat(events.get(5).get("arguments").stringValue()).isEqualTo("{\"city\":\"Paris\"}");
        JsonNode call = translator.response().at("/output/0");
        assertThat(call.get("type").stringValue()).isEqualTo("function_call");
        assertThat(call.get("id").stringValue()).startsWith("fc_");
        assertThat(call.get("name").stringValue()).isEqualTo("weather");
        assertThat(call.get("arguments").stringValue()).isEqualTo("{\"city\":\"Paris\"}");
        assertThat(call.get("status").stringValue()).isEqualTo("completed");
    }

    @Test
    void anAnswerCutByItsTokenLimitIsIncomplete() {
        ResponseStreamTranslator translator = translator("{\"model\":\"m\",\"input\":\"x\",\"max_output_tokens\":2}");
        List<ObjectNode> events = run(translator, chunk(Delta.content("ab"), "length"), usage(Usage.of(3, 2)));
        assertThat(events.getLast().get("type").stringValue()).isEqualTo("response.incomplete");
        assertThat(translator.response().get("status").stringValue()).isEqualTo("incomplete");
        assertThat(translator.response().at("/incomplete_details/reason").stringValue()).isEqualTo("max_output_tokens");
        assertThat(translator.response().get("max_output_tokens").intValue()).isEqualTo(2);
        assertThat(translator.response().at("/output/0/status").stringValue()).isEqualTo("incomplete");

        ResponseStreamTranslator serverCapped = translator("{\"model\":\"m\",\"input\":\"x\"}");
        List<ObjectNode> capped = run(serverCapped, chunk(Delta.content("ab"), "length"), usage(Usage.of(3, 2)));
        assertThat(capped.getLast().get("type").stringValue()).as("no limit of the client's was hit")
                .isEqualTo("response.completed");
        assertThat(serverCapped.response().get("incomplete_details").isNull()).isTrue();
    }

    @Test
    void aFailureAfterTheStartEndsTheStreamWithResponseFailedKeepingWhatCame() {
        ResponseStreamTranslator translator = translator("{\"model\":\"m\",\"input\":\"x\"}");
        List<ObjectNode> events = new ArrayList<>(translator.onChunk(chunk(Delta.content("partial"), null)));
        events.addAll(translator.fail("server_error", "The backend failed."));
        ObjectNode failed = events.getLast();
        assertThat(failed.get("type").stringValue()).isEqualTo("response.failed");
        assertThat(failed.get("sequence_number").intValue()).isEqualTo(events.size() - 1);
        assertThat(failed.at("/response/status").stringValue()).isEqualTo("failed");
        assertThat(failed.at("/response/error/code").stringValue()).isEqualTo("server_error");
        assertThat(failed.at("/response/output/0/type").stringValue()).isEqualTo("message");
    }

    /** A native stream cut after its first text delta goes on as chat: the same item, text and sequence. */
    @Test
    void aCutNativeStreamGoesOnInItsOwnItem() {
        ResponseStreamTranslator translator = translator("{\"model\":\"m\",\"input\":\"x\"}");
        List<ObjectNode> passed = List.of(
                (ObjectNode) JSON.readTree("{\"type\":\"response.output_item.added\",\"sequence_number\":2,"
                        + "\"output_index\":0,\"item\":{\"id\":\"msg_native\",\"type\":\"message\","
                        + "\"status\":\"in_progress\",\"role\":\"assistant\",\"content\":[]}}"),
                (ObjectNode) JSON.readTree("{\"type\":\"response.output_text.delta\",\"sequence_number\":4,"
                        + "\"item_id\":\"msg_native\",\"output_index\":0,\"content_index\":0,\"delta\":\"Hel\"}"));
        translator.resumeAfter(passed, 5);
        List<ObjectNode> events = run(translator, chunk(Delta.content("lo"), null), chunk(Delta.content(""), "stop"));
        assertThat(events).extracting(e -> e.get("type").stringValue()).containsExactly(
                "response.output_text.delta", "response.output_text.done", "response.content_part.done",
                "response.output_item.done", "response.completed");
        for (int i = 0; i < events.size(); i++) {
            assertThat(events.get(i).get("sequence_number").asInt()).isEqualTo(5 + i);
        }
        assertThat(events.getFirst().get("item_id").asString()).isEqualTo("msg_native");
        assertThat(events.get(1).get("text").asString()).isEqualTo("Hello");
        JsonNode response = events.getLast().get("response");
        assertThat(response.get("output")).hasSize(1);
        assertThat(response.at("/output/0/id").asString()).isEqualTo("msg_native");
        assertThat(response.at("/output/0/content/0/text").asString()).isEqualTo("Hello");
    }
}
