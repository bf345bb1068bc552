package dev.lazarus.kt.backend;

import dev.lazarus.kt.sampling.TokenLogprobs;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Keeps each sampled token's log-probabilities until the text it produced has been sent, so every
 * chunk carries the entries of exactly the tokens whose text it (finally) completes. Text is held
 * back while a UTF-8 character or a possible stop string is incomplete; a token whose text ends up
 * inside a stop string is never sent, and neither is its entry. Positions are UTF-8 byte offsets
 * into the completion, because a token may end in the middle of a character.
 * Not thread-safe: one per sequence.
 */
final class PendingLogprobs {

    /** A token's log-probabilities and where its text starts in the completion, in characters. */
    record Scored(TokenLogprobs logprobs, int textOffset) {}

    private record Entry(TokenLogprobs logprobs, long startByte, long endByte) {}

    private final ArrayDeque<Entry> pending = new ArrayDeque<>();
    private final StringBuilder sent = new StringBuilder();
    private long tokenBytes;
    private long sentBytes;
    // a cursor turning byte offsets into character offsets of `sent`; offsets only grow
    private int cursorChar;
    private long cursorByte;

    /** A sampled token whose text is {@code textBytes} bytes of the completion. */
    void add(TokenLogprobs logprobs, int textBytes) {
        pending.add(new Entry(logprobs, tokenBytes, tokenBytes + textBytes));
        tokenBytes += textBytes;
    }

    /** Records text just sent; returns the entries of the tokens whose text is now fully out. */
    List<Scored> sent(String text) {
        sent.append(text);
        sentBytes += text.getBytes(StandardCharsets.UTF_8).length;
        List<Scored> out = new ArrayList<>();
        while (!pending.isEmpty() && pending.peek().endByte() <= sentBytes) {
            out.add(score(pending.poll()));
        }
        return out;
    }

    /**
     * The generation is over: the entries of tokens whose text was at least partly sent; the rest
     * (text swallowed by a stop string, end-of-generation tokens) are dropped.
     */
    List<Scored> finish() {
        List<Scored> out = new ArrayList<>();
        for (Entry e : pending) {
            if (e.startByte() < sentBytes) {
                out.add(score(e));
            }
        }
        pending.clear();
        return out;
    }

    private Scored score(Entry e) {
        while (cursorByte < e.startByte() && cursorChar < sent.length()) {
            int cp = sent.codePointAt(cursorChar);
            cursorByte += utf8Length(cp);
            cursorChar += Character.charCount(cp);
        }
        return new Scored(e.logprobs(), cursorChar);
    }

    private static int utf8Length(int codePoint) {
        return codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
    }
}
