package dev.lazarus.kt.grammar;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The required-call grammars of the formats llama-server (b11669) reads with its own parsers: their rules as it
 * reports them ({@code generation_settings.grammar} with {@code -v}; rule names aside) and the answers they allow.
 */
class ToolCallGrammarsTest {

    static final Map<String, Object> PROPERTIES = new java.util.LinkedHashMap<>();

    static {
        PROPERTIES.put("level", Map.of("type", "integer", "minimum", 1, "maximum", 7));
        PROPERTIES.put("mode", Map.of("enum", List.of(1, 2, 3)));
        PROPERTIES.put("note", Map.of("type", List.of("string", "null")));
    }

    static final List<ChatGrammars.ToolSpec> TOOLS = List.of(
            new ChatGrammars.ToolSpec("set_level", Map.of("type", "object", "properties", PROPERTIES, "required",
                    List.of("level", "mode"))),
            new ChatGrammars.ToolSpec("now", Map.of("type", "object", "properties", Map.of())));

    static final String XML_CALL = "<tool_call>\n<function=set_level>\n<parameter=mode>\n2\n</parameter>\n"
            + "<parameter=level>\n7\n</parameter>\n<parameter=note>\nany </parameter> text\n</parameter>\n</function>\n</tool_call>";

    @Test
    void xmlCallsTakeRequiredParametersInAnyOrderAndStringsAsRawText() {
        String gbnf = ToolCallGrammars.xml(TOOLS, false, false);
        assertThat(gbnf).contains("tool-1 ::= (\"<function=\" \"now\" \">\\n\") \"</function>\\n\"\n",
                "tool-call ::= \"<tool_call>\\n\" (tool-0 | tool-1) \"</tool_call>\" space\n",
                "tool-call-root ::= tool-call\n",
                "tool-0-arg-2 ::= (\"<parameter=\" \"note\" \">\\n\") xml-arg-string\n",
                "xml-arg-string-13 ::= [\\n] | [^\\n] xml-arg-string\n",
                "root ::= \"<|im_start|>assistant\\n\" space until space tool-call-root\n");
        Grammar g = Grammar.parse(gbnf);
        String head = "<|im_start|>assistant\n";
        assertThat(TextMatch.matches(g, head + "<think>\nhmm </think> so\n" + XML_CALL)).isTrue();
        assertThat(TextMatch.matches(g, head + XML_CALL.replace("<parameter=mode>\n2", "<parameter=mode>\n4"))).isFalse();
        assertThat(TextMatch.matches(g, head + XML_CALL.replace("<parameter=mode>\n2\n</parameter>\n", ""))).isFalse();
        assertThat(TextMatch.matches(g, head + XML_CALL + "\n" + XML_CALL)).isFalse();
        assertThat(TextMatch.matches(Grammar.parse(ToolCallGrammars.xml(TOOLS, true, false)), head + XML_CALL + "\n" + XML_CALL))
                .isTrue();
        assertThat(TextMatch.matches(g, head + XML_CALL.substring("<tool_call>\n".length())))
                .as("only the coder layout may leave out <tool_call>").isFalse();
    }

    /** Qwen3-Coder's layout: the first call may come without {@code <tool_call>}, so free text holds no opener. */
    @Test
    void coderCallsMayLeaveOutTheFirstBlockOpening() {
        Grammar g = Grammar.parse(ToolCallGrammars.xml(TOOLS, false, true));
        String head = "<|im_start|>assistant\n";
        String bare = XML_CALL.substring("<tool_call>\n".length());
        assertThat(TextMatch.matches(g, head + "Sure. " + bare)).isTrue();
        assertThat(TextMatch.matches(g, head + "Sure. " + XML_CALL)).isTrue();
        assertThat(TextMatch.matches(g, head + "a <function=now> b " + XML_CALL)).isFalse();
    }

    @Test
    void glmCallsTakeRequiredArgumentsInOrder() {
        String gbnf = ToolCallGrammars.glm(TOOLS, false, true);
        assertThat(gbnf).contains("tool-0 ::= ((\"\" \"set_level\" \"\") space) tool-0-arg-0 space tool-0-arg-1 (space (tool-0-arg-2))*\n",
                "tool-1 ::= ((\"\" \"now\" \"\") space)\n",
                "tool-call ::= \"<tool_call>\" space (tool-0 | tool-1) space \"</tool_call>\" space\n");
        Grammar g = Grammar.parse(gbnf);
        String call = "<tool_call>set_level\n<arg_key>level</arg_key>\n<arg_value>3</arg_value>\n<arg_key>mode</arg_key>\n"
                + "<arg_value>1</arg_value></tool_call>";
        assertThat(TextMatch.matches(g, "<|assistant|><think>a <tool_call> b</think>\ntext " + call)).isTrue();
        assertThat(TextMatch.matches(g, "<|assistant|>" + call.replace("<arg_value>3", "<arg_value>9"))).isFalse();
        assertThat(TextMatch.matches(g, "<|assistant|>" + call + call)).isFalse();
        assertThat(TextMatch.matches(Grammar.parse(ToolCallGrammars.glm(TOOLS, true, true)), "<|assistant|>" + call + "\n" + call))
                .isTrue();
    }

    @Test
    void harmonyCallsComeOnACommentaryOrAnalysisChannel() {
        Grammar g = Grammar.parse(ToolCallGrammars.harmony(TOOLS));
        assertThat(TextMatch.matches(g, "<|start|>assistant<|channel|>analysis<|message|>think<|end|><|start|>assistant"
                + "<|channel|>commentary to=functions.now <|constrain|>json<|message|>{}")).isTrue();
        assertThat(TextMatch.matches(g, "<|start|>assistant to=functions.set_level<|channel|>commentary<|message|>"
                + "{\"level\": 2, \"mode\": 3}")).isTrue();
        assertThat(TextMatch.matches(g, "<|start|>assistant<|channel|>final<|message|>hi")).isFalse();
    }

    @Test
    void untilSeveralDelimitersAllowsNone() {
        Grammar g = Grammar.parse(JsonSchemaGrammar.build(c -> c.addRule("root",
                Until.rules(c, "until", List.of("<ab>", "<b>", "bc")))));
        assertThat(TextMatch.matches(g, "<a<ab <<b <c b")).isTrue();
        for (String bad : List.of("x<ab>", "<<b>", "abc", "<a<b>")) {
            assertThat(TextMatch.matches(g, bad)).as(bad).isFalse();
        }
    }
}
