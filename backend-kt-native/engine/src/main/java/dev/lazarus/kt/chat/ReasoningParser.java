package dev.lazarus.kt.chat;

import java.util.List;

/**
 * Splits an answer, as it streams, into its reasoning block and the text after it, as llama-server
 * does: whitespace before the answer is dropped; a block is recognised only at the start of the answer
 * (or is already open when the prompt opened it); the layout newlines after the tags
 * ({@link ReasoningSyntax}) are dropped; a {@code <think>} later in the text is plain text. Where the syntax says so,
 * a call's open tag ends the block as well and stays in the answer. A block the
 * generation never closes is all reasoning. Text that may still be a tag is held back until it is known.
 * Not thread-safe: one per generation.
 */
public final class ReasoningParser extends StreamingParser {

    private enum State { LEADING, OPEN_LAYOUT, INSIDE, CLOSE_LAYOUT, CONTENT }

    private final ReasoningSyntax syntax;
    private final List<String> ends;
    private State state;
    private int layoutLeft;

    public ReasoningParser(ReasoningSyntax syntax, ReasoningSyntax.PromptState prompt) {
        this.syntax = syntax;
        this.ends = syntax.endsAtCall() == null ? List.of(ReasoningSyntax.CLOSE)
                : List.of(ReasoningSyntax.CLOSE, syntax.endsAtCall());
        switch (prompt.start()) {
            case INSIDE -> {
                state = State.OPEN_LAYOUT;
                layoutLeft = syntax.newlinesAfterOpen();
                pending.append(prompt.carried());
            }
            case CLOSED -> state = State.CONTENT;
            case BEFORE -> state = State.LEADING;
        }
    }

    @Override
    void drain(List<AnswerPiece> out, boolean end) {
        while (!pending.isEmpty()) {
            switch (state) {
                case LEADING -> {
                    int start = 0;
                    while (start < pending.length() && Character.isWhitespace(pending.charAt(start))) {
                        start++;
                    }
                    pending.delete(0, start);
                    if (pending.isEmpty()) {
                        return;
                    }
                    if (startsWith(ReasoningSyntax.OPEN)) {
                        pending.delete(0, ReasoningSyntax.OPEN.length());
                        state = State.OPEN_LAYOUT;
                        layoutLeft = syntax.newlinesAfterOpen();
                    } else if (!end && ReasoningSyntax.OPEN.startsWith(pending.toString())) {
                        return; // may still become the tag
                    } else {
                        state = State.CONTENT;
                    }
                }
                case OPEN_LAYOUT, CLOSE_LAYOUT -> {
                    boolean any = layoutLeft == ReasoningSyntax.ANY_WHITESPACE;
                    while (layoutLeft > 0 && !pending.isEmpty()
                            && (pending.charAt(0) == '\n' || any && Character.isWhitespace(pending.charAt(0)))) {
                        pending.deleteCharAt(0);
                        layoutLeft -= any ? 0 : 1;
                    }
                    if (pending.isEmpty() && layoutLeft > 0 && !end) {
                        return;
                    }
                    state = state == State.OPEN_LAYOUT ? State.INSIDE : State.CONTENT;
                }
                case INSIDE -> {
                    int close = pending.indexOf(ReasoningSyntax.CLOSE);
                    int call = syntax.endsAtCall() == null ? -1 : pending.indexOf(syntax.endsAtCall());
                    if (call >= 0 && (close < 0 || call < close)) { // the call is the answer's, not reasoning
                        emit(out, new AnswerPiece.Reasoning(pending.substring(0, call)), call);
                        pending.delete(0, call);
                        state = State.CONTENT;
                        continue;
                    }
                    if (close >= 0) {
                        emit(out, new AnswerPiece.Reasoning(pending.substring(0, close)), close);
                        pending.delete(0, close + ReasoningSyntax.CLOSE.length());
                        state = State.CLOSE_LAYOUT;
                        layoutLeft = syntax.newlinesAfterClose();
                        continue;
                    }
                    int ready = end ? pending.length() : pending.length() - Markers.partialAtEnd(pending, ends);
                    emit(out, new AnswerPiece.Reasoning(pending.substring(0, ready)), ready);
                    pending.delete(0, ready);
                    return;
                }
                case CONTENT -> {
                    emit(out, new AnswerPiece.Text(pending.toString()), pending.length());
                    pending.setLength(0);
                }
            }
        }
    }

    private boolean startsWith(String tag) {
        return pending.length() >= tag.length() && pending.substring(0, tag.length()).equals(tag);
    }

    /** Adds {@code piece} unless its text ({@code length} characters) is empty. */
    private static void emit(List<AnswerPiece> out, AnswerPiece piece, int length) {
        if (length > 0) {
            out.add(piece);
        }
    }
}
