package dev.lazarus.kt.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.Tool;
import dev.lazarus.kt.chat.ChatFormat;
import dev.lazarus.kt.chat.ChatTemplate;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code tool_choice: "required"}: a grammar of the template's call syntax where kt-native has one, else a 400. */
class OutputConstraintTest {

    static final Tool WEATHER = new Tool("function", new Tool.Function("get_weather", "Weather",
            Map.of("type", "object", "properties", Map.of("city", Map.of("type", "string"))), null));

    static OutputConstraint required(String templateFile) {
        ChatCompletionRequest request = ChatCompletionRequest.builder().model("m").messages(List.of(ChatMessage.user("hi")))
                .tools(List.of(WEATHER)).toolChoice("required").build();
        ChatFormat format = ChatTemplate.of(template(templateFile), "<s>", "</s>").format();
        return OutputConstraint.of(request, ToolUse.of(request), format);
    }

    @Test
    void hermesCallsGetTheirGrammar() {
        assertThat(required("qwen2.5.jinja").gbnf()).contains("<tool_call>").contains("\\\"arguments\\\"");
    }

    /** Qwen3-Coder's layout (Qwen3.5 without a reasoning block) opens calls with <tool_call> too, but writes XML. */
    @Test
    void xmlCallsAreRefusedNotGivenTheJsonGrammar() {
        String coder = template("qwen3.5.jinja").replace("<think>", "").replace("</think>", "");
        ChatCompletionRequest request = ChatCompletionRequest.builder().model("m").messages(List.of(ChatMessage.user("hi")))
                .tools(List.of(WEATHER)).toolChoice("required").build();
        ChatFormat format = ChatTemplate.of(coder, "<s>", "</s>").format();
        assertThat(format.reasoning()).isNull();
        assertThatThrownBy(() -> OutputConstraint.of(request, ToolUse.of(request), format))
                .isInstanceOf(BackendException.class).hasMessageContaining("tool_choice 'required'");
        assertThatThrownBy(() -> required("qwen3.5.jinja")).isInstanceOf(BackendException.class);
    }

    static String template(String file) {
        try (InputStream in = OutputConstraintTest.class.getResourceAsStream("/chat-templates/" + file)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
