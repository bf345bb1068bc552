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

    /**
     * @param reasoning the reasoning splitter, or null to leave thinking in the content
     * @param toolCalls the tool-call parser, or null when the request offers no tools
     */
    public ThinkingAnswer(ReasoningParser reasoning, ToolCallParser toolCalls) {
        this.reasoning = reasoning;
        this.toolCalls = toolCalls;
    }

    @Override
    public List<AnswerPiece> push(String text) {
        return reasoning == null ? calls(List.of(new AnswerPiece.Text(text)), false) : calls(reasoning.push(text), false);
    }

    @Override
    public List<AnswerPiece> finish() {
        return calls(reasoning == null ? List.of() : reasoning.finish(), true);
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
