package dev.lazarus.kt.chat;

import java.util.ArrayList;
import java.util.List;

/**
 * What the streaming parsers share: each piece of generated text joins the text not decided yet ({@link #pending}),
 * and {@link #drain} gives out what can be decided now, everything at the end.
 */
abstract class StreamingParser {

    final StringBuilder pending = new StringBuilder();

    /** Takes the next piece of generated text; returns what can be decided now (possibly nothing). */
    public final List<AnswerPiece> push(String text) {
        pending.append(text);
        return drained(false);
    }

    /** The generation ended: everything still held back. */
    public final List<AnswerPiece> finish() {
        return drained(true);
    }

    private List<AnswerPiece> drained(boolean end) {
        List<AnswerPiece> out = new ArrayList<>();
        drain(out, end);
        return out;
    }

    /** Moves what can be decided out of {@link #pending} into {@code out}; at the {@code end}, all of it. */
    abstract void drain(List<AnswerPiece> out, boolean end);
}
