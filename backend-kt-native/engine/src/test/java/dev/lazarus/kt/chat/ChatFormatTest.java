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

    static String template(String file) {
        try (InputStream in = ChatFormatTest.class.getResourceAsStream("/chat-templates/" + file)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
