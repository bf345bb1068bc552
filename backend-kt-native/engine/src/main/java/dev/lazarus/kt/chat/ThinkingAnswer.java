package dev.lazarus.kt.chat;

import java.util.ArrayList;
import java.util.List;

/**
 * An answer in the layout most templates give it, parsed as it streams the way llama-server parses it:
 * a {@code <think>} block first (when the format has one and the request wants it split), then tool
 * calls in the text after it (when the request offers tools). Not thread-safe: one per generation.
 */
public final class ThinkingAnswer implements AnswerParser {

    private final ReasoningParser reasoning;
    private final ToolCallParser toolCalls;
    private String leading;

    /**
     * @param reasoning the reasoning splitter, or null to leave thinking in the content
     * @param toolCalls the tool-call parser, or null when the request offers no tools
     */
    public ThinkingAnswer(ReasoningParser reasoning, ToolCallParser toolCalls) {
        this(reasoning, toolCalls, "");
    }

    /**
     * @param leading text the answer begins with before anything generated: where the reasoning is not split,
     *                the block the prompt opened ({@code <think>\n} of DeepSeek-R1), which llama-server reads as
     *                the start of the answer
     */
    public ThinkingAnswer(ReasoningParser reasoning, ToolCallParser toolCalls, String leading) {
        this.reasoning = reasoning;
        this.toolCalls = toolCalls;
        this.leading = leading;
    }

    @Override
    public List<AnswerPiece> push(String text) {
        String t = leading + text;
        leading = "";
        return reasoning == null ? calls(List.of(new AnswerPiece.Text(t)), false) : calls(reasoning.push(t), false);
    }

    @Override
    public List<AnswerPiece> finish() {
        List<AnswerPiece> out = new ArrayList<>(leading.isEmpty() ? List.of() : push(""));
        out.addAll(calls(reasoning == null ? List.of() : reasoning.finish(), true));
        return out;
    }

    private List<AnswerPiece> calls(List<AnswerPiece> pieces, boolean end) {
        if (toolCalls == null) {
            return pieces;
        }
        List<AnswerPiece> out = new ArrayList<>();
        for (AnswerPiece piece : pieces) {
            if (piece instanceof AnswerPiece.Text t) {
                out.addAll(toolCalls.push(t.text()));
            } else {
                toolCalls.afterReasoning();
                out.add(piece);
            }
        }
        if (end) {
            out.addAll(toolCalls.finish());
        }
        return out;
    }
}
