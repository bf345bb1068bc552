package dev.lazarus.kt.chat;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.chat.AnswerPiece.Call;
import dev.lazarus.kt.chat.AnswerPiece.Reasoning;
import dev.lazarus.kt.chat.AnswerPiece.Text;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** gpt-oss's channels split into reasoning, content and calls, whole and streamed at every split. */
class HarmonyAnswerTest {

    static Stream<Arguments> answers() {
        return Stream.of(
                Arguments.of("analysis then final", true, 8,
                        "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Hello",
                        List.of(new Reasoning("Think."), new Text("Hello"))),
                Arguments.of("final only, ended by return", true, 8, "<|channel|>final<|message|>Hi<|return|>",
                        List.of(new Text("Hi"))),
                Arguments.of("a call in the channel part", true, 8,
                        "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary "
                                + "to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}<|call|>",
                        List.of(new Reasoning("Need weather."), new Call("get_weather", "{\"city\": \"Paris\"}"))),
                Arguments.of("a call in the role part, the call token being the end of generation", true, 8,
                        "<|start|>assistant to=functions.now<|channel|>commentary json<|message|>{}",
                        List.of(new Call("now", "{}"))),
                Arguments.of("a call with broken JSON is content", true, 8,
                        "<|channel|>commentary to=functions.now <|constrain|>json<|message|>{x<|call|>",
                        List.of(new Text("{x"))),
                Arguments.of("no tools: the call is content", true, 0,
                        "<|channel|>commentary to=functions.now <|constrain|>json<|message|>{}<|call|>",
                        List.of(new Text("{}"))),
                Arguments.of("reasoning not split: analysis is content", false, 8,
                        "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Hello",
                        List.of(new Text("Think.Hello"))),
                Arguments.of("text outside any message is content", true, 8, "Hello <|end|",
                        List.of(new Text("Hello <|end|"))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("answers")
    void splitsWholeAndAtEverySplit(String name, boolean split, int maxCalls, String answer, List<AnswerPiece> expected) {
        for (int at = 0; at <= answer.length(); at++) {
            HarmonyAnswer parser = new HarmonyAnswer(split, maxCalls);
            List<AnswerPiece> pieces = new ArrayList<>(parser.push(answer.substring(0, at)));
            pieces.addAll(parser.push(answer.substring(at)));
            pieces.addAll(parser.finish());
            assertThat(ReasoningParserTest.merged(pieces)).as("split at %d", at).isEqualTo(expected);
        }
    }
}
