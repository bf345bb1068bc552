package dev.lazarus.kt.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.ResponseFormat;
import dev.lazarus.backend.api.openai.Tool;
import dev.lazarus.kt.chat.ChatFormat;
import dev.lazarus.kt.chat.ChatTemplate;
import dev.lazarus.kt.grammar.ChatGrammars;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code tool_choice: "required"}: a grammar of the template's call syntax where kt-native has one, else a 400. A
 * schema beside tools wins over them; a grammar beside tools is a 400 (both as llama-server b11669 answers).
 */
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

    /**
     * Qwen3-Coder's layout (Qwen3.5 without a reasoning block) and Qwen3.5's open calls with <tool_call> too, but
     * write XML: they get the XML grammar, fed from the answer's head; formats without one stay a 400.
     */
    @Test
    void xmlCallsGetTheXmlGrammarOthersWithoutOneAreRefused() {
        String coder = template("qwen3.5.jinja").replace("<think>", "<thonk>").replace("</think>", "</thonk>");
        ChatCompletionRequest request = ChatCompletionRequest.builder().model("m").messages(List.of(ChatMessage.user("hi")))
                .tools(List.of(WEATHER)).toolChoice("required").build();
        ChatFormat format = ChatTemplate.of(coder, "<s>", "</s>").format();
        assertThat(format.reasoning()).isNull();
        OutputConstraint coderCalls = OutputConstraint.of(request, ToolUse.of(request), format);
        assertThat(coderCalls.gbnf()).contains("<function=", "tool-call-first").doesNotContain("arguments");
        assertThat(coderCalls.head()).isEqualTo("<|im_start|>assistant\n");
        assertThat(required("qwen3.5.jinja").gbnf()).contains("<function=").doesNotContain("tool-call-first");
        assertThat(required("glm-4.5.jinja").gbnf()).contains("<arg_key>");
        assertThat(required("gpt-oss.jinja").gbnf()).contains("to=functions.");
        assertThat(required("deepseek-v3-tools.jinja").gbnf()).contains("\"<｜tool▁call▁begin｜>function\"");
        assertThat(required("deepseek-v3.1.jinja").gbnf()).contains("\"<｜tool▁call▁begin｜>\" (");
        assertThatThrownBy(() -> required("deepseek-r1.jinja")).hasMessageContaining("| tojson");
        assertThat(required("qwen3.jinja").gbnf()).contains("(\"<think>\"", "\"<tool_call>\\n\"");
        assertThat(required("qwen3.jinja").head()).isEqualTo("<|im_start|>assistant\n");
        for (String refused : List.of("deepseek-v3.jinja", "deepseek-v3.2.jinja")) {
            assertThatThrownBy(() -> required(refused)).as(refused).isInstanceOf(BackendException.class)
                    .hasMessageContaining("tool_choice 'required'");
        }
    }

    static final Map<String, Object> SCHEMA = Map.of("type", "object",
            "properties", Map.of("pick", Map.of("enum", List.of("red", "green"))), "required", List.of("pick"));

    static OutputConstraint withTools(String toolChoice, ChatCompletionRequest.Builder constraint) {
        ChatCompletionRequest request = constraint.model("m").messages(List.of(ChatMessage.user("hi")))
                .tools(List.of(WEATHER)).toolChoice(toolChoice).build();
        return OutputConstraint.of(request, ToolUse.of(request), ChatTemplate.of(template("qwen2.5.jinja"), "<s>", "</s>").format());
    }

    static String schemaAlone(ChatCompletionRequest.Builder constraint) {
        ChatCompletionRequest request = constraint.model("m").messages(List.of(ChatMessage.user("hi"))).build();
        return OutputConstraint.of(request, ToolUse.of(request), ChatTemplate.of(template("qwen2.5.jinja"), "<s>", "</s>")
                .format()).gbnf();
    }

    @Test
    void aSchemaBesideToolsWinsWhateverTheToolChoice() {
        List<ChatCompletionRequest.Builder> schemas = List.of(
                ChatCompletionRequest.builder().responseFormat(new ResponseFormat("json_schema", Map.of("name", "x", "schema", SCHEMA))),
                ChatCompletionRequest.builder().responseFormat(new ResponseFormat("json_object", null)),
                ChatCompletionRequest.builder().extra("json_schema", SCHEMA));
        for (ChatCompletionRequest.Builder schema : schemas) {
            String alone = schemaAlone(schema);
            assertThat(alone).isNotNull().doesNotContain("tool_call");
            for (String choice : List.of("auto", "required", "none")) {
                OutputConstraint constraint = withTools(choice, schema);
                assertThat(constraint.gbnf()).as(choice).isEqualTo(alone);
                assertThat(constraint.jsonContent()).as(choice).isTrue();
            }
        }
        assertThat(withTools("required", ChatCompletionRequest.builder()).param()).isEqualTo("tools");
    }

    @Test
    void aGrammarBesideToolsIsRefusedUnlessTheToolChoiceIsNone() {
        ChatCompletionRequest.Builder grammar = ChatCompletionRequest.builder().extra("grammar", "root ::= \"a\"");
        for (String choice : List.of("auto", "required")) {
            assertThatThrownBy(() -> withTools(choice, grammar)).as(choice).isInstanceOfSatisfying(BackendException.class,
                    e -> assertThat(e.param()).isEqualTo("grammar"))
                    .hasMessage("Cannot use custom grammar constraints with tools.");
        }
        assertThat(withTools("none", grammar).gbnf()).isEqualTo("root ::= \"a\"");
    }

    static final Map<String, Object> NAMED = Map.of("type", "function", "function", Map.of("name", "get_weather"));

    /**
     * A named choice is the named call alone where kt-native has the template's call grammar, before a schema beside
     * the tools; elsewhere it is {@code auto}, as llama-server b11669 reads every named choice.
     */
    @Test
    void aNamedChoiceIsThatCallWhereTheFormatHasAGrammarElseAuto() {
        String hermes = ChatGrammars.hermesNamed(new ChatGrammars.ToolSpec("get_weather", WEATHER.function().parameters()));
        ChatCompletionRequest.Builder schema = ChatCompletionRequest.builder()
                .responseFormat(new ResponseFormat("json_schema", Map.of("name", "x", "schema", SCHEMA)));
        for (ChatCompletionRequest.Builder request : List.of(ChatCompletionRequest.builder(), schema)) {
            ChatCompletionRequest named = request.model("m").messages(List.of(ChatMessage.user("hi")))
                    .tools(List.of(WEATHER)).toolChoice(NAMED).build();
            OutputConstraint constraint = OutputConstraint.of(named, ToolUse.of(named),
                    ChatTemplate.of(template("qwen2.5.jinja"), "<s>", "</s>").format());
            assertThat(constraint.gbnf()).isEqualTo(hermes);
            assertThat(constraint.jsonContent()).isFalse();
        }
        ChatCompletionRequest named = ChatCompletionRequest.builder().model("m").messages(List.of(ChatMessage.user("hi")))
                .tools(List.of(WEATHER)).toolChoice(NAMED).build();
        assertThat(OutputConstraint.of(named, ToolUse.of(named), ChatTemplate.of(template("llama3.jinja"), "<s>", "</s>")
                .format()).gbnf()).contains("\\\"parameters\\\"").doesNotContain("until");
        for (String other : List.of("qwen3.5.jinja", "qwen3.jinja", "gpt-oss.jinja")) {
            assertThat(OutputConstraint.of(named, ToolUse.of(named), ChatTemplate.of(template(other), "<s>", "</s>")
                    .format())).as(other).isEqualTo(OutputConstraint.NONE);
        }
    }

    static String template(String file) {
        try (InputStream in = OutputConstraintTest.class.getResourceAsStream("/chat-templates/" + file)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
