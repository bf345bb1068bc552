package dev.lazarus.kt.chat;

import dev.lazarus.backend.api.openai.Tool;
import java.util.List;
import java.util.Objects;

/**
 * Splits an answer's text, as it streams, into plain text and the tool calls that the model's
 * {@link ToolCallSyntax} writes. A block's calls are given out only when the block is complete and
 * valid, so a malformed call is sent as the text the model wrote instead (the client sees what
 * happened; never an error). Text that may begin a block ({@code "<tool_c"}) is held back until it is
 * known not to. As llama-server does, text before the first call is kept as written, and whitespace
 * before the answer, between and after calls is dropped (with it all that follows the calls, where the syntax says
 * so). Not thread-safe: one per generation.
 */
public final class ToolCallParser extends StreamingParser {

    private final ToolCallSyntax syntax;
    private final List<Tool> tools;
    private final int maxCalls;
    private boolean inBlock;
    private boolean afterCall;
    private boolean atStart = true;
    private boolean ended;
    private int calls;

    /**
     * @param tools    the request's tools (some syntaxes type the arguments by their schemas)
     * @param maxCalls calls to recognise; blocks past that many stay text ({@code parallel_tool_calls: false} is 1)
     */
    public ToolCallParser(ToolCallSyntax syntax, List<Tool> tools, int maxCalls) {
        if (maxCalls < 1) {
            throw new IllegalArgumentException("maxCalls must be at least 1, got " + maxCalls);
        }
        this.syntax = Objects.requireNonNull(syntax, "syntax");
        this.tools = List.copyOf(tools);
        this.maxCalls = maxCalls;
    }

    /** Hermes-style {@code <tool_call>} blocks, for tests and callers without a template. */
    public ToolCallParser(int maxCalls) {
        this(new HermesCalls(), List.of(), maxCalls);
    }

    /**
     * The text follows a reasoning block: its leading whitespace is content. (At the start of an answer
     * llama-server drops it.)
     */
    public void afterReasoning() {
        atStart = false;
    }

    /** At the end, an unclosed block that parses is still a call. */
    @Override
    void drain(List<AnswerPiece> out, boolean end) {
        String open = syntax.open();
        while (true) {
            if (ended) {
                pending.setLength(0);
                return;
            }
            if (inBlock) {
                int bodyEnd = syntax.bodyEnd(pending);
                if (bodyEnd < 0 && !end) {
                    return;
                }
                boolean closed = bodyEnd >= 0;
                int blockEnd = closed ? bodyEnd + syntax.closeLength() : pending.length();
                String body = pending.substring(0, closed ? bodyEnd : pending.length());
                String written = open + pending.substring(0, blockEnd);
                pending.delete(0, blockEnd);
                inBlock = false;
                List<AnswerPiece.Call> parsed = syntax.parse(body, tools);
                if (parsed == null) {
                    text(out, written);
                    continue;
                }
                for (AnswerPiece.Call call : parsed.subList(0, Math.min(parsed.size(), maxCalls - calls))) {
                    calls++;
                    out.add(call);
                }
                afterCall = true;
                continue;
            }
            int start = calls < maxCalls ? pending.indexOf(open) : -1;
            if (start >= 0) {
                String before = pending.substring(0, start);
                String separator = syntax.separator();
                text(out, !separator.isEmpty() && before.endsWith(separator)
                        ? before.substring(0, before.length() - separator.length()) : before);
                pending.delete(0, start + open.length());
                inBlock = true;
                continue;
            }
            int keep = end ? 0 : heldBack(open);
            String ready = pending.substring(0, pending.length() - keep);
            pending.delete(0, ready.length());
            text(out, end && calls > 0 ? ready.stripTrailing() : ready);
            return;
        }
    }

    /** The tail that may still turn out to be the start of a block, or whitespace after a call. */
    private int heldBack(String open) {
        String separator = syntax.separator();
        int partial = calls < maxCalls
                ? Markers.partialAtEnd(pending, separator.isEmpty() ? List.of(open) : List.of(open, separator + open)) : 0;
        if (!afterCall && calls == 0) {
            return partial;
        }
        int start = pending.length() - partial;
        while (start > 0 && Character.isWhitespace(pending.charAt(start - 1))) {
            start--;
        }
        return pending.length() - start;
    }

    private void text(List<AnswerPiece> out, String text) {
        // the whitespace before the answer, and the layout between and after calls
        String t = afterCall || atStart ? text.stripLeading() : text;
        if (!t.isEmpty() && afterCall && !syntax.keepsTextAfterCalls()) {
            ended = true;
        } else if (!t.isEmpty()) {
            afterCall = false;
            atStart = false;
            out.add(new AnswerPiece.Text(t));
        }
    }
}
