package dev.lazarus.gateway.api.anthropic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.gateway.api.ApiError;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

class MessagesRequestTranslatorTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private final MessagesRequestTranslator translator = new MessagesRequestTranslator(JSON);

    @SuppressWarnings("unchecked")
    private ChatCompletionRequest chat(String body) {
        return translator.toChat(JSON.readValue(body, Map.class));
    }

    @Test
    void systemBlocksContentBlocksAndSamplingMapOntoTheChatRequest() {
        ChatCompletionRequest chat = chat("""
                {"model": "m", "max_tokens": 64, "system": [{"type": "text", "text": "Be brief."},
                 {"type": "text", "text": "Be kind.", "cache_control": {"type": "ephemeral"}}],
                 "messages": [{"role": "user", "content": [{"type": "text", "text": "What is this?"},
                   {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}}]}],
                 "temperature": 0.2, "top_p": 0.9, "top_k": 40, "stop_sequences": ["END"],
                 "metadata": {"user_id": "u-1"}, "stream": true, "service_tier": "auto", "cache_prompt": true}
                """);
        assertThat(chat.model()).isEqualTo("m");
        assertThat(chat.maxTokens()).isEqualTo(64);
        assertThat(chat.messages().getFirst()).isEqualTo(ChatMessage.system("Be brief.\nBe kind."));
        ChatMessage user = chat.messages().get(1);
        assertThat(user.role()).isEqualTo("user");
        assertThat(user.content().parts()).hasSize(2);
        assertThat(user.content().parts().get(1).type()).isEqualTo("image_url");
        assertThat(user.content().parts().get(1).imageUrl()).containsEntry("url", "data:image/png;base64,iVBOR");
        assertThat(chat.temperature()).isEqualTo(0.2);
        assertThat(chat.topP()).isEqualTo(0.9);
        assertThat(chat.stop()).containsExactly("END");
        assertThat(chat.user()).isEqualTo("u-1");
        assertThat(chat.extra()).containsEntry("top_k", 40).containsEntry("cache_prompt", true)
                .doesNotContainKeys("service_tier", "stream", "metadata");
        assertThat(chat.stream()).as("the router always streams; the client's choice is the controller's").isNull();
    }

    @Test
    void toolUseAndToolResultRoundTripAsToolCallsAndToolMessages() {
        ChatCompletionRequest chat = chat("""
                {"model": "m", "max_tokens": 64,
                 "tools": [{"name": "get_weather", "description": "Weather of a city",
                            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}},
                           {"type": "web_search_20250305", "name": "web_search"}],
                 "tool_choice": {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": true},
                 "messages": [
                   {"role": "user", "content": "Weather in Paris?"},
                   {"role": "assistant", "content": [
                     {"type": "thinking", "thinking": "I should call the tool.", "signature": "sig"},
                     {"type": "text", "text": "Let me check."},
                     {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
                   {"role": "user", "content": [
                     {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "18 C"}]},
                     {"type": "tool_result", "tool_use_id": "toolu_2", "content": "boom", "is_error": true},
                     {"type": "text", "text": "And tomorrow?"}]}]}
                """);
        assertThat(chat.tools()).hasSize(1);
        assertThat(chat.tools().getFirst().function().name()).isEqualTo("get_weather");
        assertThat(chat.tools().getFirst().function().parameters()).containsKey("properties");
        assertThat(chat.toolChoice()).isEqualTo(Map.of("type", "function", "function", Map.of("name", "get_weather")));
        assertThat(chat.parallelToolCalls()).isFalse();
        List<ChatMessage> messages = chat.messages();
        assertThat(messages).extracting(ChatMessage::role).containsExactly("user", "assistant", "tool", "tool", "user");
        ChatMessage assistant = messages.get(1);
        assertThat(assistant.text()).isEqualTo("Let me check.");
        assertThat(assistant.reasoningContent()).isEqualTo("I should call the tool.");
        assertThat(assistant.toolCalls().getFirst().id()).isEqualTo("toolu_1");
        assertThat(assistant.toolCalls().getFirst().function().name()).isEqualTo("get_weather");
        assertThat(JSON.readTree(assistant.toolCalls().getFirst().function().arguments()).get("city").asString())
                .isEqualTo("Paris");
        assertThat(messages.get(2).toolCallId()).isEqualTo("toolu_1");
        assertThat(messages.get(2).text()).isEqualTo("18 C");
        assertThat(messages.get(3).text()).isEqualTo("Error: boom");
        assertThat(messages.get(4).text()).isEqualTo("And tomorrow?");
    }

    @Test
    void toolChoicesMapOntoTheChatOnes() {
        assertThat(chat(withChoice("{\"type\": \"auto\"}")).toolChoice()).isEqualTo("auto");
        assertThat(chat(withChoice("{\"type\": \"any\"}")).toolChoice()).isEqualTo("required");
        assertThat(chat(withChoice("{\"type\": \"none\"}")).toolChoice()).isEqualTo("none");
        assertThatThrownBy(() -> chat(withChoice("{\"type\": \"some\"}"))).isInstanceOf(ApiError.class)
                .hasMessageContaining("tool_choice.type");
    }

    private static String withChoice(String choice) {
        return "{\"model\": \"m\", \"max_tokens\": 8, \"tool_choice\": " + choice
                + ", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}";
    }

    @Test
    void thinkingSwitchesTheTemplatesThinkingOnOrOff() {
        assertThat(chat("""
                {"model": "m", "max_tokens": 8, "thinking": {"type": "enabled", "budget_tokens": 1024},
                 "messages": [{"role": "user", "content": "hi"}]}
                """).extra()).containsEntry("chat_template_kwargs", Map.of("enable_thinking", true));
        assertThat(chat("""
                {"model": "m", "max_tokens": 8, "thinking": {"type": "disabled"},
                 "messages": [{"role": "user", "content": "hi"}]}
                """).extra()).containsEntry("chat_template_kwargs", Map.of("enable_thinking", false));
    }

    @Test
    void badRequestsAre400sNamingTheField() {
        assertThatThrownBy(() -> chat("{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}"))
                .isInstanceOfSatisfying(ApiError.class, e -> {
                    assertThat(e.status().value()).isEqualTo(400);
                    assertThat(e.getMessage()).isEqualTo("max_tokens: Field required");
                });
        assertThatThrownBy(() -> chat("{\"max_tokens\": 5, \"messages\": []}")).hasMessage("model: Field required");
        assertThatThrownBy(() -> chat("{\"model\": \"m\", \"max_tokens\": 0, \"messages\": []}"))
                .hasMessageContaining("max_tokens");
        assertThatThrownBy(() -> chat("{\"model\": \"m\", \"max_tokens\": 5}")).hasMessage("messages: Field required");
        assertThatThrownBy(() -> chat("{\"model\": \"m\", \"max_tokens\": 5, \"messages\": [{\"role\": \"system\","
                + " \"content\": \"x\"}]}")).hasMessageContaining("messages.0.role");
        assertThatThrownBy(() -> chat("{\"model\": \"m\", \"max_tokens\": 5, \"messages\": [{\"role\": \"user\","
                + " \"content\": [{\"type\": \"video\"}]}]}")).hasMessageContaining("messages.0.content.0.type");
    }

    @Test
    void countTokensNeedsNoMaxTokens() {
        @SuppressWarnings("unchecked")
        Map<String, Object> body = JSON.readValue("{\"model\": \"m\", \"messages\": [{\"role\": \"user\", "
                + "\"content\": \"hi\"}]}", Map.class);
        assertThat(translator.toChat(body, false).maxTokens()).isNull();
    }
}
