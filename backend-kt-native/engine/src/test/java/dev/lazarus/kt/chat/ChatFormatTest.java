package dev.lazarus.kt.chat;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The format each real template gets: the call syntax by its markers, the reasoning layout by rendering it. */
class ChatFormatTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource(nullValues = "none", value = {
            "qwen3.jinja,       HermesCalls,   1,    2",
            "qwen2.5.jinja,     HermesCalls,   none, none",
            "deepseek-v3.jinja, DeepSeekCalls, 0,    0",
            "deepseek-r1.jinja, DeepSeekCalls, 0,    0",
            "deepseek-v3.2.jinja, DsmlCalls,   0,    0",
            "glm-4.5.jinja,     GlmCalls,      0,    1",
            "minimax-m2.jinja,  MiniMaxCalls,  1,    2",
            "llama3.jinja,      Llama3Calls,   none, none",
            "gpt-oss.jinja,     HermesCalls,   none, none"})
    void detectsTheFormat(String file, String syntax, Integer afterOpen, Integer afterClose) {
        ChatFormat format = ChatTemplate.of(template(file), "<s>", "</s>").format();
        assertThat(format.harmony()).isEqualTo(file.startsWith("gpt-oss"));
        assertThat(format.toolCalls().getClass().getSimpleName()).isEqualTo(syntax);
        if (afterOpen == null) {
            assertThat(format.reasoning()).isNull();
        } else {
            assertThat(format.reasoning()).isEqualTo(new ReasoningSyntax(afterOpen, afterClose));
        }
    }

    /** Qwen3.5's XML calls, with llama-server's own reasoning layout for the format whatever the template renders. */
    @org.junit.jupiter.api.Test
    void qwen35WritesXmlCalls() {
        ChatFormat format = ChatTemplate.of(template("qwen3.5.jinja"), "<s>", "</s>").format();
        assertThat(format.toolCalls()).isInstanceOf(XmlCalls.class);
        assertThat(format.reasoning()).isEqualTo(new ReasoningSyntax(ReasoningSyntax.ANY_WHITESPACE,
                ReasoningSyntax.ANY_WHITESPACE, "<tool_call>"));
        assertThat(format.markers()).contains("<tool_call>", "</tool_call>", "<think>", "</think>");
        // Qwen3-Coder writes no <think>: no reasoning block
        String coder = template("qwen3.5.jinja").replace("<think>", "").replace("</think>", "");
        assertThat(ChatTemplate.of(coder, "<s>", "</s>").format().reasoning()).isNull();
    }

    /** Templates that write {@code <tool_call><function=} without a newline are not this format to llama-server b11669. */
    @org.junit.jupiter.api.Test
    void xmlCallsWithoutTheNewlineAreNotDetected() {
        String source = "{{ '<tool_call><function=' ~ tool_call.name ~ '>' }}<parameter=";
        assertThat(XmlCalls.writtenBy(source)).isFalse();
        assertThat(XmlCalls.writtenBy(source.replace("<tool_call><function=", "<tool_call>\n<function="))).isTrue();
        assertThat(ChatFormat.toolCallSyntax(source)).isInstanceOf(HermesCalls.class);
    }

    static String template(String file) {
        try (InputStream in = ChatFormatTest.class.getResourceAsStream("/chat-templates/" + file)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
