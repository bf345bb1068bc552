package dev.lazarus.gateway.api.responses;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.gateway.api.ApiError;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

class ResponsesRequestTranslatorTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private final ResponsesRequestTranslator translator = new ResponsesRequestTranslator(JSON);

    private ChatCompletionRequest chat(String body, List<JsonNode> prior) {
        ObjectNode request = (ObjectNode) JSON.readTree(body);
        return translator.toChat(request, translator.inputItems(request), prior);
    }

    private ChatCompletionRequest chat(String body) {
        return chat(body, List.of());
    }

    @Test
    void aStringInputWithInstructionsIsASystemAndAUserMessageAndTheSettingsMapOntoChat() {
        ChatCompletionRequest chat = chat("""
                {"model": "m", "input": "Hi", "instructions": "Be brief.", "max_output_tokens": 64,
                 "temperature": 0.2, "top_p": 0.9, "parallel_tool_calls": false, "store": false,
                 "metadata": {"k": "v"}, "reasoning": {"effort": "low"}, "include": ["reasoning.encrypted_content"],
                 "top_k": 5, "min_p": 0.1, "stream": true}
                """);
        assertThat(chat.model()).isEqualTo("m");
        assertThat(chat.messages()).containsExactly(ChatMessage.system("Be brief."), ChatMessage.user("Hi"));
        assertThat(chat.maxTokens()).isEqualTo(64);
        assertThat(chat.temperature()).isEqualTo(0.2);
        assertThat(chat.topP()).isEqualTo(0.9);
        assertThat(chat.parallelToolCalls()).isFalse();
        assertThat(chat.stream()).as("the router streams every call itself").isNull();
        assertThat(chat.extra()).as("llama.cpp's extras go on; the Responses API's own fields do not")
                .containsExactlyInAnyOrderEntriesOf(Map.of("top_k", 5, "min_p", 0.1, "reasoning_effort", "low"));
    }

    @Test
    void aToolCallRoundTripBecomesAnAssistantCallAndAToolAnswer() {
        ChatCompletionRequest chat = chat("""
                {"model": "m", "tools": [
                   {"type": "function", "name": "weather", "description": "Weather of a city",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}, "strict": true},
                   {"type": "web_search"}],
                 "tool_choice": {"type": "function", "name": "weather"},
                 "input": [
                   {"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"}]},
                   {"type": "reasoning", "id": "rs_1", "summary": [],
                    "content": [{"type": "reasoning_text", "text": "I should call the tool."}]},
                   {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "weather",
                    "arguments": "{\\"city\\":\\"Paris\\"}"},
                   {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "weather",
                    "arguments": "{\\"city\\":\\"Lyon\\"}"},
                   {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
                   {"type": "function_call_output", "call_id": "call_2",
                    "output": [{"type": "input_text", "text": "rain"}]}]}
                """);
        assertThat(chat.tools()).singleElement().satisfies(tool -> {
            assertThat(tool.type()).isEqualTo("function");
            assertThat(tool.function().name()).isEqualTo("weather");
            assertThat(tool.function().strict()).isTrue();
            assertThat(tool.function().parameters()).containsKey("properties");
        });
        assertThat(chat.toolChoice()).isEqualTo(Map.of("type", "function", "function", Map.of("name", "weather")));
        List<ChatMessage> messages = chat.messages();
        assertThat(messages).extracting(ChatMessage::role).containsExactly("user", "assistant", "tool", "tool");
        ChatMessage call = messages.get(1);
        assertThat(call.reasoningContent()).isEqualTo("I should call the tool.");
        assertThat(call.toolCalls()).extracting(c -> c.id() + " " + c.function().name() + " " + c.function().arguments())
                .containsExactly("call_1 weather {\"city\":\"Paris\"}", "call_2 weather {\"city\":\"Lyon\"}");
        assertThat(messages.get(2).toolCallId()).isEqualTo("call_1");
        assertThat(messages.get(2).text()).isEqualTo("sunny");
        assertThat(messages.get(3).text()).isEqualTo("rain");
    }

    @Test
    void theStoredConversationComesFirstAndAssistantOutputTextIsAnAssistantMessage() {
        List<JsonNode> prior = List.of(
                JSON.readTree("{\"type\":\"message\",\"id\":\"msg_1\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"One\"}]}"),
                JSON.readTree("{\"type\":\"message\",\"id\":\"msg_2\",\"role\":\"assistant\",\"status\":\"completed\","
                        + "\"content\":[{\"type\":\"output_text\",\"text\":\"Two\",\"annotations\":[]}]}"));
        ChatCompletionRequest chat = chat("{\"model\":\"m\",\"instructions\":\"sys\",\"input\":\"Three\"}", prior);
        assertThat(chat.messages()).containsExactly(ChatMessage.system("sys"), ChatMessage.user("One"),
                ChatMessage.assistant("Two"), ChatMessage.user("Three"));
    }

    @Test
    void imagesStayPartsAndDeveloperMessagesAreSystemMessages() {
        ChatCompletionRequest chat = chat("""
                {"model": "m", "input": [
                  {"type": "message", "role": "developer", "content": "Rules."},
                  {"role": "user", "content": [{"type": "input_text", "text": "What is it?"},
                    {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "low"}]}]}
                """);
        assertThat(chat.messages().get(0)).isEqualTo(ChatMessage.system("Rules."));
        assertThat(chat.messages().get(1).content().parts()).extracting(p -> p.type())
                .containsExactly("text", "image_url");
        assertThat(chat.messages().get(1).content().parts().get(1).imageUrl())
                .containsEntry("url", "data:image/png;base64,AAAA").containsEntry("detail", "low");
    }

    @Test
    void textFormatJsonSchemaIsAChatResponseFormat() {
        ChatCompletionRequest chat = chat("""
                {"model": "m", "input": "x", "text": {"format": {"type": "json_schema", "name": "answer",
                  "schema": {"type": "object", "properties": {"a": {"type": "integer"}}}, "strict": true}}}
                """);
        assertThat(chat.responseFormat().type()).isEqualTo("json_schema");
        assertThat(chat.responseFormat().jsonSchema()).containsEntry("name", "answer").containsEntry("strict", true)
                .containsKey("schema");
        assertThat(chat("{\"model\":\"m\",\"input\":\"x\",\"text\":{\"format\":{\"type\":\"json_object\"}}}")
                .responseFormat().type()).isEqualTo("json_object");
    }

    @Test
    void badInputIsAFourHundredNamingTheParameter() {
        assertThatThrownBy(() -> chat("{\"input\":\"x\"}")).isInstanceOfSatisfying(ApiError.class,
                e -> assertThat(e.detail().param()).isEqualTo("model"));
        assertThatThrownBy(() -> chat("{\"model\":\"m\",\"input\":42}")).isInstanceOfSatisfying(ApiError.class,
                e -> assertThat(e.detail().param()).isEqualTo("input"));
        assertThatThrownBy(() -> chat("{\"model\":\"m\",\"input\":[{\"type\":\"computer_call\"}]}"))
                .isInstanceOfSatisfying(ApiError.class, e -> {
                    assertThat(e.status().value()).isEqualTo(400);
                    assertThat(e.detail().param()).isEqualTo("input[0].type");
                });
        assertThatThrownBy(() -> chat("{\"model\":\"m\",\"input\":[{\"type\":\"function_call_output\",\"output\":\"x\"}]}"))
                .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.detail().param()).isEqualTo("input[0].call_id"));
        assertThatThrownBy(() -> chat("{\"model\":\"m\"}")).isInstanceOfSatisfying(ApiError.class,
                e -> assertThat(e.detail().param()).isEqualTo("input"));
        assertThatThrownBy(() -> chat("{\"model\":\"m\",\"input\":\"x\",\"max_output_tokens\":0}"))
                .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.detail().param()).isEqualTo("max_output_tokens"));
    }
}
