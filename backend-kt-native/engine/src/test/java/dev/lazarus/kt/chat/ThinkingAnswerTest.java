package dev.lazarus.kt.chat;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.chat.AnswerPiece.Call;
import dev.lazarus.kt.chat.AnswerPiece.Reasoning;
import dev.lazarus.kt.chat.AnswerPiece.Text;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A thinking model that calls tools: the reasoning block first, then text and calls, at every split of the stream. */
class ThinkingAnswerTest {

    static final String CALL = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";

    static List<AnswerPiece> parse(String answer, int split) {
        ThinkingAnswer parser = new ThinkingAnswer(
                new ReasoningParser(new ReasoningSyntax(1, 2), ReasoningSyntax.stateAfter("<|im_start|>assistant\n")),
                new ToolCallParser(new HermesCalls(), List.of(), 8));
        List<AnswerPiece> pieces = new ArrayList<>(parser.push(answer.substring(0, split)));
        pieces.addAll(parser.push(answer.substring(split)));
        pieces.addAll(parser.finish());
        return ReasoningParserTest.merged(pieces);
    }

    @Test
    void reasoningThenACall() {
        String answer = "<think>\nThe user wants weather.\n</think>\n\n" + CALL;
        for (int split = 0; split <= answer.length(); split++) {
            assertThat(parse(answer, split)).as("split at %d", split).containsExactly(
                    new Reasoning("The user wants weather.\n"), new Call("get_weather", "{\"city\": \"Paris\"}"));
        }
    }

    @Test
    void textAfterTheBlockKeepsItsOwnWhitespaceBeforeTheCall() {
        String answer = "<think>\nplan\n</think>\n\n\n Checking.\n" + CALL;
        for (int split = 0; split <= answer.length(); split++) {
            assertThat(parse(answer, split)).as("split at %d", split).containsExactly(new Reasoning("plan\n"),
                    new Text("\n Checking.\n"), new Call("get_weather", "{\"city\": \"Paris\"}"));
        }
    }

    @Test
    void aCallInsideTheReasoningIsReasoning() {
        String answer = "<think>\nmaybe " + CALL + "\n</think>\n\nNo call.";
        assertThat(parse(answer, answer.length())).containsExactly(new Reasoning("maybe " + CALL + "\n"),
                new Text("No call."));
    }

    /** Qwen3.5: the prompt opened the block, a call ends it without {@code </think>}, and is a call. */
    @Test
    void qwen35ReasoningEndedByACall() {
        String call = ToolCallParserTest.xml("get_weather", "city", "Paris");
        String answer = "\nThe user wants weather.\n" + call + "\n";
        for (int split = 0; split <= answer.length(); split++) {
            ThinkingAnswer parser = new ThinkingAnswer(new ReasoningParser(XmlCalls.REASONING,
                    ReasoningSyntax.stateAfter("<|im_start|>assistant\n<think>\n")),
                    new ToolCallParser(new XmlCalls(), ToolCallParserTest.TOOLS, 8));
            List<AnswerPiece> pieces = new ArrayList<>(parser.push(answer.substring(0, split)));
            pieces.addAll(parser.push(answer.substring(split)));
            pieces.addAll(parser.finish());
            assertThat(ReasoningParserTest.merged(pieces)).as("split at %d", split).containsExactly(
                    new Reasoning("The user wants weather.\n"), new Call("get_weather", "{\"city\":\"Paris\"}"));
        }
    }

    @Test
    void unsplitTheBlockThePromptOpenedLeadsTheText() {
        ThinkingAnswer parser = new ThinkingAnswer(null, null, "<think>\n");
        assertThat(parser.push("Hm.\n</think>")).containsExactly(new Text("<think>\nHm.\n</think>"));
        assertThat(parser.push(" OK")).containsExactly(new Text(" OK"));
        assertThat(parser.finish()).isEmpty();
        assertThat(new ThinkingAnswer(null, null, "<think>\n").finish()).as("nothing generated")
                .containsExactly(new Text("<think>\n"));
    }
}
