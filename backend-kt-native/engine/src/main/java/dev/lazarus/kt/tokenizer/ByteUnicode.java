package dev.lazarus.kt.tokenizer;

import java.util.Arrays;

/**
 * GPT-2's reversible byte ↔ character mapping: byte-level BPE vocabularies spell every byte as a
 * printable character (printable Latin-1 bytes stand for themselves, the rest are shifted to
 * U+0100 and up), so a token string like {@code "Ġhello"} means the bytes {@code " hello"}.
 */
final class ByteUnicode {

    private static final char[] BYTE_TO_CHAR = new char[256];
    private static final int[] CHAR_TO_BYTE = new int[512];

    static {
        Arrays.fill(CHAR_TO_BYTE, -1);
        int next = 256;
        for (int b = 0; b < 256; b++) {
            boolean printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            char c = printable ? (char) b : (char) next++;
            BYTE_TO_CHAR[b] = c;
            CHAR_TO_BYTE[c] = b;
        }
    }

    private ByteUnicode() {}

    static char encode(byte b) {
        return BYTE_TO_CHAR[b & 0xFF];
    }

    /** The byte a character stands for, or -1 when it is not one of the 256 mapped characters. */
    static int decode(int c) {
        return c >= 0 && c < CHAR_TO_BYTE.length ? CHAR_TO_BYTE[c] : -1;
    }

    static String encode(byte[] bytes) {
        char[] out = new char[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            out[i] = encode(bytes[i]);
        }
        return new String(out);
    }
}
