package dev.lazarus.kt.chat;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.chat.ToolCallParser.Call;
import dev.lazarus.kt.chat.ToolCallParser.Piece;
import dev.lazarus.kt.chat.ToolCallParser.Text;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ToolCallParserTest {

    static final String WEATHER = """
            <tool_call>
            {"name": "get_weather", "arguments": {"city": "Paris", "days": 2, "scale": 1.50}}
            </tool_call>""";

    static Stream<Arguments> outputs() {
        return Stream.of(
                Arguments.of("plain text, whitespace kept", 8, "Hello,  world \n",
                        List.of(new Text("Hello,  world \n"))),
                Arguments.of("one call", 8, WEATHER + "\n",
                        List.of(new Call("get_weather", "{\"city\":\"Paris\",\"days\":2,\"scale\":1.50}"))),
                Arguments.of("text before the call", 8, "Let me check.\n\n" + WEATHER,
                        List.of(new Text("Let me check."),
                                new Call("get_weather", "{\"city\":\"Paris\",\"days\":2,\"scale\":1.50}"))),
                Arguments.of("two calls and text after", 8, """
                        <tool_call>
                        {"name": "a", "arguments": {}}
                        </tool_call>
                        <tool_call>
                        {"name": "b", "arguments": "{\\"x\\": [1, 2]}"}
                        </tool_call>
                        done""",
                        List.of(new Call("a", "{}"), new Call("b", "{\"x\": [1, 2]}"), new Text("done"))),
                Arguments.of("arguments missing", 8, "<tool_call>{\"name\": \"now\"}</tool_call>",
                        List.of(new Call("now", "{}"))),
                Arguments.of("unclosed block with valid JSON", 8, "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n",
                        List.of(new Call("now", "{}"))),
                Arguments.of("malformed JSON stays text", 8, "<tool_call>\n{\"name\": \"now\", \"arguments\": {]}\n</tool_call>",
                        List.of(new Text("<tool_call>\n{\"name\": \"now\", \"arguments\": {]}\n</tool_call>"))),
                Arguments.of("no name stays text", 8, "<tool_call>{\"arguments\": {}}</tool_call>",
                        List.of(new Text("<tool_call>{\"arguments\": {}}</tool_call>"))),
                Arguments.of("numeric arguments stay text", 8, "<tool_call>{\"name\": \"x\", \"arguments\": 3}</tool_call>",
                        List.of(new Text("<tool_call>{\"name\": \"x\", \"arguments\": 3}</tool_call>"))),
                Arguments.of("truncated call stays text", 8, "ok <tool_call>\n{\"name\": \"now\", \"argu",
                        List.of(new Text("ok <tool_call>\n{\"name\": \"now\", \"argu"))),
                Arguments.of("a partial tag at the end is text", 8, "see <tool_c",
                        List.of(new Text("see <tool_c"))),
                Arguments.of("a look-alike tag is text", 8, "a <tool_cat> b",
                        List.of(new Text("a <tool_cat> b"))),
                Arguments.of("only one call when parallel calls are off", 1,
                        "<tool_call>{\"name\": \"a\"}</tool_call>\n<tool_call>{\"name\": \"b\"}</tool_call>",
                        List.of(new Call("a", "{}"), new Text("<tool_call>{\"name\": \"b\"}</tool_call>"))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("outputs")
    void parsesWhole(String name, int maxCalls, String generated, List<Piece> expected) {
        ToolCallParser parser = new ToolCallParser(maxCalls);
        List<Piece> pieces = new ArrayList<>(parser.push(generated));
        pieces.addAll(parser.finish());
        assertThat(merged(pieces)).isEqualTo(expected);
    }

    /** Any split of the stream into two pushes gives the same calls and text, as does one push per character. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("outputs")
    void parsesTheSameAtEverySplit(String name, int maxCalls, String generated, List<Piece> expected) {
        for (int split = 0; split <= generated.length(); split++) {
            ToolCallParser parser = new ToolCallParser(maxCalls);
            List<Piece> pieces = new ArrayList<>(parser.push(generated.substring(0, split)));
            pieces.addAll(parser.push(generated.substring(split)));
            pieces.addAll(parser.finish());
            assertThat(merged(pieces)).as("split at %d", split).isEqualTo(expected);
        }
        ToolCallParser parser = new ToolCallParser(maxCalls);
        List<Piece> pieces = new ArrayList<>();
        generated.chars().forEach(c -> pieces.addAll(parser.push(Character.toString(c))));
        pieces.addAll(parser.finish());
        assertThat(merged(pieces)).as("a character at a time").isEqualTo(expected);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("outputs")
    void nothingOfACallLeaksAsTextBeforeItIsDecided(String name, int maxCalls, String generated, List<Piece> expected) {
        ToolCallParser parser = new ToolCallParser(maxCalls);
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
    private static List<Piece> merged(List<Piece> pieces) {
        List<Piece> out = new ArrayList<>();
        for (Piece p : pieces) {
            if (p instanceof Text t && !out.isEmpty() && out.getLast() instanceof Text last) {
                out.set(out.size() - 1, new Text(last.text() + t.text()));
            } else {
                out.add(p);
            }
        }
        return out;
    }

    private static String expectedText(List<Piece> expected) {
        StringBuilder sb = new StringBuilder();
        expected.forEach(p -> {
            if (p instanceof Text t) {
                sb.append(t.text());
            }
        });
        return sb.toString();
    }
}
