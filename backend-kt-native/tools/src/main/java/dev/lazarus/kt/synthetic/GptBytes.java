package dev.lazarus.kt.synthetic;

/**
 * GPT-2's reversible mapping from bytes to printable characters, which byte-level BPE vocabularies store
 * their pieces in: printable Latin-1 bytes stand for themselves, the other 68 bytes (controls, space,
 * soft hyphen, ...) are moved to U+0100 and up in byte order, so a space becomes 'Ġ' and a newline 'Ċ'.
 */
final class GptBytes {

    private static final char[] BYTE_TO_CHAR = buildTable();

    private GptBytes() {
    }

    static char charOf(int unsignedByte) {
        return BYTE_TO_CHAR[unsignedByte];
    }

    /** The vocabulary spelling of some UTF-8 bytes: one character per byte. */
    static String encode(byte[] bytes) {
        StringBuilder sb = new StringBuilder(bytes.length);
        for (byte b : bytes) {
            sb.append(charOf(b & 0xff));
        }
        return sb.toString();
    }

    private static char[] buildTable() {
        char[] table = new char[256];
        int next = 256;
        for (int b = 0; b < 256; b++) {
            table[b] = printsAsItself(b) ? (char) b : (char) next++;
        }
        return table;
    }

    private static boolean printsAsItself(int b) {
        return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    }
}
