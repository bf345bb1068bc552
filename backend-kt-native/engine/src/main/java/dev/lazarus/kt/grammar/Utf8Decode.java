package dev.lazarus.kt.grammar;

import dev.lazarus.kt.tokenizer.IntList;

/**
 * A token's bytes as code points, continuing a character left unfinished by the previous token and possibly
 * leaving one unfinished itself; llama.cpp's lenient grammar decoder (a byte that cannot start a character makes
 * the whole piece invalid, continuation bytes are not checked inside a character, a NUL ends the piece).
 *
 * @param codePoints the complete characters
 * @param value      the bits of the unfinished character at the end (0 when none)
 * @param remain     bytes that character still misses; 0 when none, -1 when the piece is invalid
 */
record Utf8Decode(int[] codePoints, int value, int remain) {

    /** No character pending. */
    static final long NONE = 0;
    private static final int[] LENGTH = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 2, 3, 4};

    boolean invalid() {
        return remain < 0;
    }

    /** The unfinished character as one value for the matcher's state: {@code value << 8 | remain}. */
    long pending() {
        return remain <= 0 ? NONE : ((long) value << 8) | remain;
    }

    static Utf8Decode of(byte[] bytes, long pending) {
        int value = (int) (pending >>> 8);
        int remain = (int) (pending & 0xFF);
        boolean continuing = remain > 0;
        IntList out = new IntList();
        int i = 0;
        while (i < bytes.length && bytes[i] != 0 && remain > 0) {
            int b = bytes[i] & 0xFF;
            if ((b >> 6) != 2) {
                return new Utf8Decode(new int[0], 0, -1);
            }
            value = (value << 6) + (b & 0x3F);
            i++;
            remain--;
        }
        if (continuing && remain == 0) {
            out.add(value);
        }
        while (i < bytes.length && bytes[i] != 0) {
            int first = bytes[i] & 0xFF;
            remain = LENGTH[first >> 4] - 1;
            if (remain < 0) {
                return new Utf8Decode(new int[0], 0, -1);
            }
            value = first & ((1 << (7 - remain)) - 1);
            i++;
            while (i < bytes.length && bytes[i] != 0 && remain > 0) {
                value = (value << 6) + (bytes[i] & 0x3F);
                i++;
                remain--;
            }
            if (remain == 0) {
                out.add(value);
            }
        }
        return new Utf8Decode(out.toArray(), remain == 0 ? 0 : value, remain);
    }
}
