package dev.lazarus.kt.chat;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.chat.AnswerPiece.Reasoning;
import dev.lazarus.kt.chat.AnswerPiece.Text;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The reasoning split on the answers llama-server (b11669, default {@code --reasoning-format auto}) was
 * seen to split this way, whole and streamed at every split; ChatFormatLlamaServerTest compares live.
 */
class ReasoningParserTest {

    static final ReasoningSyntax QWEN3 = new ReasoningSyntax(1, 2);
    static final ReasoningSyntax GLM = new ReasoningSyntax(0, 1);
    static final ReasoningSyntax DEEPSEEK = new ReasoningSyntax(0, 0);
    static final ReasoningSyntax QWEN35 = XmlCalls.REASONING;
    static final ReasoningSyntax.PromptState QWEN35_OPENED = ReasoningSyntax.stateAfter("<|im_start|>assistant\n<think>\n");
    static final ReasoningSyntax.PromptState BEFORE = ReasoningSyntax.stateAfter("<|im_start|>assistant\n");
    static final ReasoningSyntax.PromptState R1_OPENED = ReasoningSyntax.stateAfter("<｜Assistant｜><think>\n");
    static final ReasoningSyntax.PromptState NOT_THINKING = ReasoningSyntax.stateAfter("assistant\n<think>\n\n</think>\n\n");

    static Stream<Arguments> answers() {
        return Stream.of(
                Arguments.of("Qwen3: the layout newlines dropped", QWEN3, BEFORE, "<think>\nhmm\n</think>\n\nHello",
                        List.of(new Reasoning("hmm\n"), new Text("Hello"))),
                Arguments.of("Qwen3: only the layout's newlines dropped", QWEN3, BEFORE, "\n<think>\nA\n\n</think>\n\n\nB",
                        List.of(new Reasoning("A\n\n"), new Text("\nB"))),
                Arguments.of("Qwen3: no newlines", QWEN3, BEFORE, "<think>A</think>B",
                        List.of(new Reasoning("A"), new Text("B"))),
                Arguments.of("leading whitespace dropped", QWEN3, BEFORE, "\n  Hi", List.of(new Text("Hi"))),
                Arguments.of("a block after text is text", QWEN3, BEFORE, "Hello <think>x</think> there",
                        List.of(new Text("Hello <think>x</think> there"))),
                Arguments.of("a look-alike tag is text", QWEN3, BEFORE, "<thinking>x", List.of(new Text("<thinking>x"))),
                Arguments.of("an unclosed block is reasoning", QWEN3, BEFORE, "<think>\nstill going",
                        List.of(new Reasoning("still going"))),
                Arguments.of("R1: opened by the prompt, its newline is reasoning", DEEPSEEK, R1_OPENED,
                        "hm\n</think>\n\nHello", List.of(new Reasoning("\nhm\n"), new Text("\n\nHello"))),
                Arguments.of("R1: never closed, all reasoning", DEEPSEEK, R1_OPENED, "Hello",
                        List.of(new Reasoning("\nHello"))),
                Arguments.of("R1: a second open tag is reasoning text", DEEPSEEK, R1_OPENED,
                        "<think>\nhm\n</think>\n\nHello", List.of(new Reasoning("\n<think>\nhm\n"), new Text("\n\nHello"))),
                Arguments.of("GLM: one newline after the close tag", GLM, BEFORE, "\n<think>A\n</think>\n\nB",
                        List.of(new Reasoning("A\n"), new Text("\nB"))),
                Arguments.of("Qwen3.5: all whitespace after the tags is layout, none before the close", QWEN35, QWEN35_OPENED,
                        "\nA \t\n\n\n</think>\n \n\nB \n\n", List.of(new Reasoning("A \t\n\n\n"), new Text("B \n\n"))),
                Arguments.of("Qwen3.5: a call ends the block and stays in the answer", QWEN35, QWEN35_OPENED,
                        "Let me see.\n<tool_call>\n<function=f>\n</function>\n</tool_call>",
                        List.of(new Reasoning("Let me see.\n"), new Text("<tool_call>\n<function=f>\n</function>\n</tool_call>"))),
                Arguments.of("Qwen3.5: a call after the close tag is the answer's", QWEN35, QWEN35_OPENED,
                        "A</think><tool_call>x</tool_call>", List.of(new Reasoning("A"), new Text("<tool_call>x</tool_call>"))),
                Arguments.of("thinking off: the answer is not split", QWEN3, NOT_THINKING, "<think>A</think>B",
                        List.of(new Text("<think>A</think>B"))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("answers")
    void splitsWholeAndAtEverySplit(String name, ReasoningSyntax syntax, ReasoningSyntax.PromptState start,
            String answer, List<AnswerPiece> expected) {
        for (int split = 0; split <= answer.length(); split++) {
            ReasoningParser parser = new ReasoningParser(syntax, start);
            List<AnswerPiece> pieces = new ArrayList<>(parser.push(answer.substring(0, split)));
            pieces.addAll(parser.push(answer.substring(split)));
            pieces.addAll(parser.finish());
            assertThat(merged(pieces)).as("split at %d", split).isEqualTo(expected);
        }
        ReasoningParser parser = new ReasoningParser(syntax, start);
        List<AnswerPiece> pieces = new ArrayList<>();
        answer.chars().forEach(c -> pieces.addAll(parser.push(Character.toString(c))));
        pieces.addAll(parser.finish());
        assertThat(merged(pieces)).as("a character at a time").isEqualTo(expected);
    }

    @org.junit.jupiter.api.Test
    void reasoningStreamsBeforeTheBlockCloses() {
        ReasoningParser parser = new ReasoningParser(QWEN3, BEFORE);
        assertThat(parser.push("<think>\nfirst ")).containsExactly(new Reasoning("first "));
        assertThat(parser.push("second</thi")).containsExactly(new Reasoning("second"));
        assertThat(parser.push("nk>\n\nAnswer")).containsExactly(new Text("Answer"));
    }

    /** Adjacent pieces of one kind as one: how a client sees a stream. */
    static List<AnswerPiece> merged(List<AnswerPiece> pieces) {
        List<AnswerPiece> out = new ArrayList<>();
        for (AnswerPiece p : pieces) {
            AnswerPiece last = out.isEmpty() ? null : out.getLast();
            if (p instanceof Text t && last instanceof Text l) {
                out.set(out.size() - 1, new Text(l.text() + t.text()));
            } else if (p instanceof Reasoning r && last instanceof Reasoning l) {
                out.set(out.size() - 1, new Reasoning(l.text() + r.text()));
            } else {
                out.add(p);
            }
        }
        return out;
    }
}
