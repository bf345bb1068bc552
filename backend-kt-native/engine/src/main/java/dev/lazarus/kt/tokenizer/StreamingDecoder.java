package dev.lazarus.kt.tokenizer;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.function.IntPredicate;

/**
 * Turns generated tokens into text as they come, one call per token, emitting only complete
 * UTF-8 characters: a token may end in the middle of a character (byte-fallback tokens, or BPE
 * tokens splitting an emoji), and its remaining bytes are held until the next token completes it.
 * Not thread-safe: one per sequence.
 */
public final class StreamingDecoder {

    private final Tokenizer tokenizer;
    private final IntPredicate renderSpecial;
    private final ByteArrayOutputStream pending = new ByteArrayOutputStream();

    /** Decodes like {@link Tokenizer#decode(int[])}: control tokens render as nothing. */
    public StreamingDecoder(Tokenizer tokenizer) {
        this(tokenizer, false);
    }

    public StreamingDecoder(Tokenizer tokenizer, boolean renderSpecial) {
        this(tokenizer, id -> renderSpecial);
    }

    /** Renders the control tokens {@code renderSpecial} accepts as their text (a chat format's markers), others as nothing. */
    public StreamingDecoder(Tokenizer tokenizer, IntPredicate renderSpecial) {
        this.tokenizer = tokenizer;
        this.renderSpecial = renderSpecial;
    }

    /** The text this token completes; "" while a character is still incomplete. */
    public String push(int tokenId) {
        return push(tokenizer.tokenBytes(tokenId, renderSpecial.test(tokenId)));
    }

    public String push(byte[] bytes) {
        pending.writeBytes(bytes);
        byte[] all = pending.toByteArray();
        int complete = completePrefix(all);
        pending.reset();
        pending.write(all, complete, all.length - complete);
        return new String(all, 0, complete, StandardCharsets.UTF_8);
    }

    /** Whatever is held back, incomplete sequences as U+FFFD; the decoder is empty afterwards. */
    public String flush() {
        String rest = pending.toString(StandardCharsets.UTF_8);
        pending.reset();
        return rest;
    }

    /** Bytes held back because they may start a character the next token completes. */
    public int pendingBytes() {
        return pending.size();
    }

    /**
     * Length of the longest prefix that does not end inside a character which later bytes could
     * still complete. Invalid bytes are passed through (decoded as U+FFFD) rather than held forever.
     */
    static int completePrefix(byte[] bytes) {
        int n = bytes.length;
        // a character is at most 4 bytes: only the last 3 can be an unfinished start
        for (int back = 1; back <= Math.min(3, n); back++) {
            int b = bytes[n - back] & 0xFF;
            if (b < 0x80) {
                return n;
            }
            if (b >= 0xC0) {
                int needed = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
                return back < needed ? n - back : n;
            }
        }
        return n;
    }
}
