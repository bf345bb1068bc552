package dev.lazarus.kt.chat;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.openai.Tool;
import dev.lazarus.kt.chat.AnswerPiece.Call;
import dev.lazarus.kt.chat.AnswerPiece.Text;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Each model family's call syntax, parsed whole and streamed at every split, into the calls and text that
 * llama-server (b11669) makes of the same answer (see ChatFormatLlamaServerTest for the live comparison).
 */
class ToolCallParserTest {

    static final ToolCallSyntax HERMES = new HermesCalls();
    static final ToolCallSyntax GLM = new GlmCalls();
    static final ToolCallSyntax DEEPSEEK = new DeepSeekCalls();
    static final ToolCallSyntax LLAMA3 = new Llama3Calls();
    static final ToolCallSyntax DSML = new DsmlCalls();
    static final ToolCallSyntax XML = new XmlCalls();
    static final ToolCallSyntax MINIMAX = new MiniMaxCalls();
    static final List<Tool> TOOLS = List.of(new Tool("function", new Tool.Function("get_weather", "Weather",
            Map.of("type", "object", "properties", Map.of("city", Map.of("type", "string"),
                    "days", Map.of("type", "integer"), "zip", Map.of("type", "string"))), null)),
            new Tool("function", new Tool.Function("configure", "Typed by the schema", Map.of("type", "object",
                    "properties", Map.of("value", Map.of("type", List.of("string", "integer")), "any", Map.of(),
                            "flag", Map.of("anyOf", List.of(Map.of("type", "boolean"), Map.of("type", "null"))),
                            "list", Map.of("type", "array")),
                    "required", List.of("value")), null)));

    /** A Qwen3.5 call block of {@code function} with {@code parameters} (name, value, ...). */
    static String xml(String function, String... parameters) {
        StringBuilder sb = new StringBuilder("<tool_call>\n<function=" + function + ">\n");
        for (int i = 0; i < parameters.length; i += 2) {
            sb.append("<parameter=").append(parameters[i]).append(">\n").append(parameters[i + 1]).append("\n</parameter>\n");
        }
        return sb.append("</function>\n</tool_call>").toString();
    }

    /** A MiniMax-M2 invoke of {@code function} with {@code parameters} (name, value, ...). */
    static String invoke(String function, String... parameters) {
        StringBuilder sb = new StringBuilder("<invoke name=\"" + function + "\">\n");
        for (int i = 0; i < parameters.length; i += 2) {
            sb.append("<parameter name=\"").append(parameters[i]).append("\">").append(parameters[i + 1]).append("</parameter>\n");
        }
        return sb.append("</invoke>\n").toString();
    }

    /** A MiniMax-M2 block of {@code invokes}, separated by {@code separator}. */
    static String minimax(String separator, String... invokes) {
        return "<minimax:tool_call>\n" + String.join(separator, invokes) + "</minimax:tool_call>";
    }

    static final String WEATHER = """
            <tool_call>
            {"name": "get_weather", "arguments": {"city": "Paris", "days": 2, "scale": 1.50}}
            </tool_call>""";

    static Stream<Arguments> outputs() {
        return Stream.of(
                Arguments.of("plain text, whitespace kept", HERMES, 8, "Hello,  world \n",
                        List.of(new Text("Hello,  world \n"))),
                Arguments.of("one call, arguments as written", HERMES, 8, WEATHER + "\n",
                        List.of(new Call("get_weather", "{\"city\": \"Paris\", \"days\": 2, \"scale\": 1.50}"))),
                Arguments.of("text before the call kept as written", HERMES, 8, "Let me check.\n\n" + WEATHER,
                        List.of(new Text("Let me check.\n\n"),
                                new Call("get_weather", "{\"city\": \"Paris\", \"days\": 2, \"scale\": 1.50}"))),
                Arguments.of("two calls and text after", HERMES, 8, """
                        <tool_call>
                        {"name": "a", "arguments": {}}
                        </tool_call>
                        <tool_call>
                        {"name": "b", "arguments": "{\\"x\\": [1, 2]}"}
                        </tool_call>
                        done""",
                        List.of(new Call("a", "{}"), new Call("b", "{\"x\": [1, 2]}"), new Text("done"))),
                Arguments.of("arguments missing", HERMES, 8, "<tool_call>{\"name\": \"now\"}</tool_call>",
                        List.of(new Call("now", "{}"))),
                Arguments.of("unclosed block with valid JSON", HERMES, 8, "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n",
                        List.of(new Call("now", "{}"))),
                Arguments.of("malformed JSON stays text", HERMES, 8, "<tool_call>\n{\"name\": \"now\", \"arguments\": {]}\n</tool_call>",
                        List.of(new Text("<tool_call>\n{\"name\": \"now\", \"arguments\": {]}\n</tool_call>"))),
                Arguments.of("no name stays text", HERMES, 8, "<tool_call>{\"arguments\": {}}</tool_call>",
                        List.of(new Text("<tool_call>{\"arguments\": {}}</tool_call>"))),
                Arguments.of("numeric arguments stay text", HERMES, 8, "<tool_call>{\"name\": \"x\", \"arguments\": 3}</tool_call>",
                        List.of(new Text("<tool_call>{\"name\": \"x\", \"arguments\": 3}</tool_call>"))),
                Arguments.of("truncated call stays text", HERMES, 8, "ok <tool_call>\n{\"name\": \"now\", \"argu",
                        List.of(new Text("ok <tool_call>\n{\"name\": \"now\", \"argu"))),
                Arguments.of("a partial tag at the end is text", HERMES, 8, "see <tool_c",
                        List.of(new Text("see <tool_c"))),
                Arguments.of("a look-alike tag is text", HERMES, 8, "a <tool_cat> b",
                        List.of(new Text("a <tool_cat> b"))),
                Arguments.of("only one call when parallel calls are off", HERMES, 1,
                        "<tool_call>{\"name\": \"a\"}</tool_call>\n<tool_call>{\"name\": \"b\"}</tool_call>",
                        List.of(new Call("a", "{}"), new Text("<tool_call>{\"name\": \"b\"}</tool_call>"))),
                Arguments.of("GLM: typed by the schema, compact", GLM, 8, """
                        OK
                        <tool_call>get_weather
                        <arg_key>city</arg_key>
                        <arg_value>Paris</arg_value>
                        <arg_key>days</arg_key>
                        <arg_value>3</arg_value>
                        <arg_key>zip</arg_key>
                        <arg_value>75001</arg_value></tool_call>""",
                        List.of(new Text("OK\n"), new Call("get_weather", "{\"city\":\"Paris\",\"days\":3,\"zip\":\"75001\"}"))),
                Arguments.of("GLM: two calls, one without arguments", GLM, 8,
                        "<tool_call>now</tool_call>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Oslo</arg_value>\n</tool_call>",
                        List.of(new Call("now", "{}"), new Call("get_weather", "{\"city\":\"Oslo\"}"))),
                Arguments.of("GLM: a key without a value stays text", GLM, 8,
                        "<tool_call>get_weather\n<arg_key>city</arg_key>\n</tool_call>",
                        List.of(new Text("<tool_call>get_weather\n<arg_key>city</arg_key>\n</tool_call>"))),
                Arguments.of("DeepSeek: two calls in one section", DEEPSEEK, 8, """
                        Checking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
                        ```json
                        {"city": "Paris"}
                        ```<｜tool▁call▁end｜>
                        <｜tool▁call▁begin｜>function<｜tool▁sep｜>now
                        ```json
                        {}
                        ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>""",
                        List.of(new Text("Checking."), new Call("get_weather", "{\"city\": \"Paris\"}"), new Call("now", "{}"))),
                Arguments.of("DeepSeek V3.1 layout", DEEPSEEK, 8,
                        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Rome\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                        List.of(new Call("get_weather", "{\"city\": \"Rome\"}"))),
                Arguments.of("DeepSeek: section never closed", DEEPSEEK, 8,
                        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>now\n```json\n{}\n```<｜tool▁call▁end｜>",
                        List.of(new Call("now", "{}"))),
                Arguments.of("DeepSeek: broken JSON stays text", DEEPSEEK, 8,
                        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>now\n```json\n{x}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                        List.of(new Text("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>now\n```json\n{x}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"))),
                Arguments.of("DSML (DeepSeek-V3.2): two invocations, typed by the string attribute, compact", DSML, 8, """
                        On it.<｜DSML｜function_calls>
                        <｜DSML｜invoke name="get_weather">
                        <｜DSML｜parameter name="city" string="true">Paris, "FR"</｜DSML｜parameter>
                        <｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
                        <｜DSML｜parameter name="zip" string="true">75001</｜DSML｜parameter>
                        </｜DSML｜invoke>
                        <｜DSML｜invoke name="get_weather">
                        </｜DSML｜invoke>
                        </｜DSML｜function_calls>""",
                        List.of(new Text("On it."), new Call("get_weather", "{\"city\":\"Paris, \\\"FR\\\"\",\"days\":3,\"zip\":\"75001\"}"),
                                new Call("get_weather", "{}"))),
                Arguments.of("DSML: the blank line before the block is the block's", DSML, 8,
                        "Let me see.\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n</｜DSML｜invoke>\n</｜DSML｜function_calls>",
                        List.of(new Text("Let me see."), new Call("get_weather", "{}"))),
                Arguments.of("DSML: a tool the request did not offer stays text", DSML, 8,
                        "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"now\">\n</｜DSML｜invoke>\n</｜DSML｜function_calls>",
                        List.of(new Text("<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"now\">\n</｜DSML｜invoke>\n</｜DSML｜function_calls>"))),
                Arguments.of("DSML: a non-string value that is no JSON stays text", DSML, 8,
                        "<｜DSML｜function_calls><｜DSML｜invoke name=\"get_weather\"><｜DSML｜parameter name=\"days\" string=\"false\">three</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls>",
                        List.of(new Text("<｜DSML｜function_calls><｜DSML｜invoke name=\"get_weather\"><｜DSML｜parameter name=\"days\" string=\"false\">three</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls>"))),
                Arguments.of("XML (Qwen3.5): a string as written, an integer as JSON, compact", XML, 8,
                        xml("get_weather", "city", "Paris, \"FR\"", "days", "3"),
                        List.of(new Call("get_weather", "{\"city\":\"Paris, \\\"FR\\\"\",\"days\":3}"))),
                Arguments.of("XML: text before kept as written, text after the calls dropped", XML, 8,
                        "Let me see. \n\n" + xml("get_weather", "city", "Paris") + "\nThat was it.",
                        List.of(new Text("Let me see. \n\n"), new Call("get_weather", "{\"city\":\"Paris\"}"))),
                Arguments.of("XML: two calls, a string over lines, a number as spelled", XML, 8,
                        xml("get_weather", "city", "New York\nCity") + "\n" + xml("get_weather", "days", "2.50", "zip", "007"),
                        List.of(new Call("get_weather", "{\"city\":\"New York\\nCity\"}"),
                                new Call("get_weather", "{\"days\":2.50,\"zip\":\"007\"}"))),
                Arguments.of("XML: string-or-integer, untyped, boolean-or-null, array", XML, 8,
                        xml("configure", "value", "42", "any", "{\"a\": [1]}", "flag", "null", "list", "[1, 2]") + "\n"
                                + xml("configure", "value", "forty-two", "any", "\"quoted\"", "flag", "true"),
                        List.of(new Call("configure", "{\"value\":42,\"any\":{\"a\": [1]},\"flag\":null,\"list\":[1, 2]}"),
                                new Call("configure", "{\"value\":\"forty-two\",\"any\":\"\\\"quoted\\\"\",\"flag\":true}"))),
                Arguments.of("XML: one call when parallel calls are off", XML, 1,
                        xml("get_weather", "city", "Paris") + "\n" + xml("get_weather", "city", "Oslo"),
                        List.of(new Call("get_weather", "{\"city\":\"Paris\"}"))),
                Arguments.of("XML: a parameter the schema does not declare stays text", XML, 8,
                        xml("get_weather", "town", "Paris"), List.of(new Text(xml("get_weather", "town", "Paris")))),
                Arguments.of("XML: a required parameter missing stays text", XML, 8,
                        xml("configure", "any", "1"), List.of(new Text(xml("configure", "any", "1")))),
                Arguments.of("XML: an integer that is no JSON stays text", XML, 8,
                        xml("get_weather", "days", "three"), List.of(new Text(xml("get_weather", "days", "three")))),
                Arguments.of("XML: a tool the request did not offer stays text", XML, 8,
                        xml("now"), List.of(new Text(xml("now")))),
                Arguments.of("MiniMax-M2: a string as written, JSON values as spelled, compact", MINIMAX, 8,
                        minimax("", invoke("configure", "value", "42", "any", " raw \"text\"\n", "flag", "null",
                                "list", "[1, 2]")),
                        List.of(new Call("configure", "{\"value\":\"42\",\"any\":\" raw \\\"text\\\"\\n\",\"flag\":null,"
                                + "\"list\":[1, 2]}"))),
                Arguments.of("MiniMax-M2: text before kept as written, spaces between tags, an integer as JSON", MINIMAX, 8,
                        "Checking. \n\n<minimax:tool_call>\n \n<invoke name=\"get_weather\">\n\t<parameter name=\"days\">-0.5e3"
                                + "</parameter>\n </invoke>\n  </minimax:tool_call>",
                        List.of(new Text("Checking. \n\n"), new Call("get_weather", "{\"days\":-0.5e3}"))),
                Arguments.of("MiniMax-M2: calls separated by a comma (llama-server's form) or a newline", MINIMAX, 8,
                        minimax(", ", invoke("get_weather", "city", "Paris"), invoke("get_weather", "days", "\"3\""))
                                + "\n" + minimax("\n", invoke("get_weather"), invoke("get_weather", "zip", "1")),
                        List.of(new Call("get_weather", "{\"city\":\"Paris\"}"), new Call("get_weather", "{\"days\":\"3\"}"),
                                new Call("get_weather", "{}"), new Call("get_weather", "{\"zip\":\"1\"}"))),
                Arguments.of("MiniMax-M2: one call when parallel calls are off", MINIMAX, 1,
                        minimax(", ", invoke("get_weather", "city", "Paris"), invoke("get_weather", "city", "Oslo")),
                        List.of(new Call("get_weather", "{\"city\":\"Paris\"}"))),
                Arguments.of("MiniMax-M2: the block tag without its newline stays text", MINIMAX, 8,
                        minimax("", invoke("get_weather")).replace(">\n<invoke", "><invoke"),
                        List.of(new Text(minimax("", invoke("get_weather")).replace(">\n<invoke", "><invoke")))),
                Arguments.of("MiniMax-M2: a required parameter after an optional one stays text", MINIMAX, 8,
                        minimax("", invoke("configure", "flag", "true", "value", "1")),
                        List.of(new Text(minimax("", invoke("configure", "flag", "true", "value", "1"))))),
                Arguments.of("MiniMax-M2: a space around a JSON value stays text", MINIMAX, 8,
                        minimax("", invoke("get_weather", "days", " 3")),
                        List.of(new Text(minimax("", invoke("get_weather", "days", " 3"))))),
                Arguments.of("MiniMax-M2: an undeclared parameter, an unoffered tool stay text", MINIMAX, 8,
                        minimax("", invoke("get_weather", "town", "Paris")) + minimax("", invoke("now")),
                        List.of(new Text(minimax("", invoke("get_weather", "town", "Paris")) + minimax("", invoke("now"))))),
                Arguments.of("Llama 3: a bare object", LLAMA3, 8, "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}",
                        List.of(new Call("get_weather", "{\"city\": \"Paris\"}"))),
                Arguments.of("Llama 3: text, python tag, braces in strings", LLAMA3, 8,
                        "Sure: <|python_tag|>{\"type\": \"function\", \"name\": \"say\", \"parameters\": {\"text\": \"a}b{\\\"\"}}",
                        List.of(new Text("Sure: <|python_tag|>"), new Call("say", "{\"text\": \"a}b{\\\"\"}"))),
                Arguments.of("whitespace before the answer dropped", LLAMA3, 8, "\n {\"name\": \"now\", \"parameters\": {}}",
                        List.of(new Call("now", "{}"))),
                Arguments.of("Llama 3: an object that is no call stays text", LLAMA3, 8, "use {\"a\": 1} here",
                        List.of(new Text("use {\"a\": 1} here"))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("outputs")
    void parsesWhole(String name, ToolCallSyntax syntax, int maxCalls, String generated,
            List<AnswerPiece> expected) {
        ToolCallParser parser = new ToolCallParser(syntax, TOOLS, maxCalls);
        List<AnswerPiece> pieces = new ArrayList<>(parser.push(generated));
        pieces.addAll(parser.finish());
        assertThat(merged(pieces)).isEqualTo(expected);
    }

    /** Any split of the stream into two pushes gives the same calls and text, as does one push per character. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("outputs")
    void parsesTheSameAtEverySplit(String name, ToolCallSyntax syntax, int maxCalls, String generated,
            List<AnswerPiece> expected) {
        for (int split = 0; split <= generated.length(); split++) {
            ToolCallParser parser = new ToolCallParser(syntax, TOOLS, maxCalls);
            List<AnswerPiece> pieces = new ArrayList<>(parser.push(generated.substring(0, split)));
            pieces.addAll(parser.push(generated.substring(split)));
            pieces.addAll(parser.finish());
            assertThat(merged(pieces)).as("split at %d", split).isEqualTo(expected);
        }
        ToolCallParser parser = new ToolCallParser(syntax, TOOLS, maxCalls);
        List<AnswerPiece> pieces = new ArrayList<>();
        generated.chars().forEach(c -> pieces.addAll(parser.push(Character.toString(c))));
        pieces.addAll(parser.finish());
        assertThat(merged(pieces)).as("a character at a time").isEqualTo(expected);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("outputs")
    void nothingOfACallLeaksAsTextBeforeItIsDecided(String name, ToolCallSyntax syntax, int maxCalls, String generated,
            List<AnswerPiece> expected) {
        ToolCallParser parser = new ToolCallParser(syntax, TOOLS, maxCalls);
        StringBuilder sent = new StringBuilder();
        for (int i = 0; i < generated.length(); i++) {
            parser.push(generated.substring(i, i + 1)).forEach(p -> {
                if (p instanceof Text t) {
                    sent.append(t.text());
                }
            });
            assertThat(expectedText(expected).startsWith(sent.toString())).as("text sent after %d characters: %s", i, sent)
                    .isTrue();
        }
    }

    /** Adjacent text pieces as one: how a client sees streamed content. */
    private static List<AnswerPiece> merged(List<AnswerPiece> pieces) {
        List<AnswerPiece> out = new ArrayList<>();
        for (AnswerPiece p : pieces) {
            if (p instanceof Text t && !out.isEmpty() && out.getLast() instanceof Text last) {
                out.set(out.size() - 1, new Text(last.text() + t.text()));
            } else {
                out.add(p);
            }
        }
        return out;
    }

    private static String expectedText(List<AnswerPiece> expected) {
        StringBuilder sb = new StringBuilder();
        expected.forEach(p -> {
            if (p instanceof Text t) {
                sb.append(t.text());
            }
        });
        return sb.toString();
    }
}
