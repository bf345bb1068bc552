package dev.lazarus.kt.grammar;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The chat grammars: llama-server's rules (b11669, as it reports them) and the answers they allow. */
class ChatGrammarsTest {

    static final Map<String, Object> WEATHER = Map.of("type", "object", "properties",
            Map.of("city", Map.of("type", "string", "enum", List.of("Paris", "Oslo"))), "required", List.of("city"));
    static final List<ChatGrammars.ToolSpec> TOOLS = List.of(new ChatGrammars.ToolSpec("get_weather", WEATHER),
            new ChatGrammars.ToolSpec("now", Map.of("type", "object", "properties", Map.of())));

    @Test
    void requiredCallsHaveLlamaServersToolRules() {
        String g = ChatGrammars.hermesRequired(TOOLS, false);
        assertThat(g).contains(
                "tool-0 ::= \"{\" space \"\\\"name\\\"\" space \":\" space (\"\\\"\" \"get_weather\" \"\\\"\") space \",\" space"
                        + " \"\\\"arguments\\\"\" space \":\" space tool-0-schema space \"}\"\n",
                "tool-0-schema ::= \"{\" space tool-0-schema-city-kv space \"}\"\n",
                "tool-0-schema-city ::= (\"\\\"Paris\\\"\" | \"\\\"Oslo\\\"\")\n",
                "tool-1-schema ::= \"{\" space \"}\"\n",
                "tool-call ::= \"<tool_call>\\n\" space (tool-0 | tool-1) space \"</tool_call>\"\n",
                "tool-calls ::= (tool-call space)+\n");
        assertThat(ChatGrammars.hermesRequired(TOOLS, true)).contains(
                "tool-call ::= \"<tool_call>\\n\" space (tool-0 | tool-1) (space \",\" space (tool-0 | tool-1))* space"
                        + " \"</tool_call>\"\n");
    }

    @Test
    void requiredAnswersEndInWellFormedCalls() {
        Grammar g = Grammar.parse(ChatGrammars.hermesRequired(TOOLS, false));
        String call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call>";
        assertThat(TextMatch.matches(g, call)).isTrue();
        assertThat(TextMatch.matches(g, "Let me check <tool_ca>.\n" + call + "\n" + call)).isTrue();
        assertThat(TextMatch.matches(g, "no call at all")).isFalse();
        assertThat(TextMatch.matches(g, call.replace("Oslo", "Rome"))).isFalse();
        assertThat(TextMatch.matches(g, "<tool_call>\nhello")).isFalse(); // once opened, only a call may follow
        assertThat(TextMatch.matches(g, "{\"name\": \"now\", \"arguments\": {}}")).isFalse();
    }

    @Test
    void llama3RequiredCallsHaveLlamaServersRulesAndAllowOnlyCallObjects() {
        assertThat(ChatGrammars.llama3Required(TOOLS, false)).contains(
                "tool-0 ::= \"{\" space (\"\\\"type\\\"\" space \":\" space \"\\\"function\\\"\" space \",\" space)?"
                        + " \"\\\"name\\\"\" space \":\" space (\"\\\"\" \"get_weather\" \"\\\"\") space \",\" space"
                        + " \"\\\"parameters\\\"\" space \":\" space tool-0-schema space \"}\"\n",
                "tool-call ::= \"\" space (tool-0 | tool-1) space \"\"\n",
                "until ::= | [^{] until\n");
        assertThat(ChatGrammars.llama3Required(TOOLS, true)).contains(
                "tool-call ::= \"\" space (tool-0 | tool-1) (space \",\" space (tool-0 | tool-1))* space \"\"\n");
        Grammar g = Grammar.parse(ChatGrammars.llama3Required(TOOLS, false));
        String call = "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}";
        assertThat(TextMatch.matches(g, call)).isTrue();
        assertThat(TextMatch.matches(g, "Sure: {\"type\": \"function\", \"name\": \"now\", \"parameters\": {}}")).isTrue();
        assertThat(TextMatch.matches(g, "no call at all")).isFalse();
        assertThat(TextMatch.matches(g, call.replace("parameters", "arguments"))).isFalse();
        assertThat(TextMatch.matches(g, call + ", " + call)).isFalse();
        assertThat(TextMatch.matches(Grammar.parse(ChatGrammars.llama3Required(TOOLS, true)), call + ", " + call)).isTrue();
    }

    /** A named choice: the one call in its format, with llama-server's call rule, and nothing before or after it. */
    @Test
    void namedCallsAreThatCallAlone() {
        Grammar hermes = Grammar.parse(ChatGrammars.hermesNamed(TOOLS.getFirst()));
        String call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call>";
        assertThat(ChatGrammars.hermesNamed(TOOLS.getFirst())).contains(
                "tool-call ::= \"<tool_call>\\n\" space (tool-0) space \"</tool_call>\"\n", "root ::= space tool-call\n");
        assertThat(TextMatch.matches(hermes, call)).isTrue();
        assertThat(TextMatch.matches(hermes, " " + call)).isTrue();
        assertThat(TextMatch.matches(hermes, "Let me check. " + call)).as("no text first").isFalse();
        assertThat(TextMatch.matches(hermes, call + "\n" + call)).as("one call").isFalse();
        assertThat(TextMatch.matches(hermes, call + " Done.")).as("nothing after").isFalse();
        assertThat(TextMatch.matches(hermes, "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}</tool_call>"))
                .as("only the named tool").isFalse();
        Grammar llama3 = Grammar.parse(ChatGrammars.llama3Named(TOOLS.get(1)));
        assertThat(TextMatch.matches(llama3, "{\"name\": \"now\", \"parameters\": {}}")).isTrue();
        assertThat(TextMatch.matches(llama3, "Sure: {\"name\": \"now\", \"parameters\": {}}")).isFalse();
        assertThat(TextMatch.matches(llama3, "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}"))
                .isFalse();
    }

    @Test
    void responseFormatAllowsTheValueFencedOrNot() {
        Grammar g = Grammar.parse(ChatGrammars.responseFormat(WEATHER));
        assertThat(TextMatch.matches(g, " {\"city\": \"Paris\"} ")).isTrue();
        assertThat(TextMatch.matches(g, "```json\n{\"city\":\"Oslo\"}\n```")).isTrue();
        assertThat(TextMatch.matches(g, "{\"city\": \"Rome\"}")).isFalse();
        assertThat(ChatGrammars.responseFormat(Map.of())).contains("response-format-schema ::= object\n",
                "root ::= space space (\"```json\" space response-format space \"```\" | space response-format space)\n");
    }
}
