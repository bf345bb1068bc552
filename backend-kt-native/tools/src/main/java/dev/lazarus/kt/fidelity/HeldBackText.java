package dev.lazarus.kt.fidelity;

/**
 * llama-server's rule for holding back generated text: after each token it looks at the last (up to) four bytes of
 * everything generated so far, and while one of them starts a UTF-8 sequence longer than the bytes after it, the
 * token's text waits and the token gets no entry of its own in {@code completion_probabilities}; the next token
 * that passes sends the whole pending text under its own id and probabilities. Only lead bytes are looked at, not
 * whether the bytes after them continue the sequence: a SentencePiece byte token {@code <0xE5>} followed by "i"
 * still counts as a cut-off three-byte character, so the "i" is held back too (measured on Debian's llama-server,
 * llama.cpp build 11669).
 */
final class HeldBackText {

    private final byte[] tail = new byte[4];
    private int length;

    /** Appends one token's bytes to the generated text. */
    void append(byte[] piece) {
        for (byte b : piece) {
            if (length == tail.length) {
                System.arraycopy(tail, 1, tail, 0, tail.length - 1);
                length--;
            }
            tail[length++] = b;
        }
    }

    /** Whether llama-server would hold the text back now: a lead byte in the last four lacks its sequence's length. */
    boolean heldBack() {
        for (int back = 1; back <= length; back++) {
            int b = tail[length - back] & 0xff;
            int needed = (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : (b & 0xF8) == 0xF0 ? 4 : 0;
            if (back < needed) {
                return true;
            }
        }
        return false;
    }
}
