package dev.lazarus.llamacpp.wire;

import tools.jackson.core.JsonParser;

/** Where the scalar value a streaming parser stands on lies in its input bytes. */
final class JsonSpans {

    private JsonSpans() {
    }

    /**
     * Notes in {@code spans[at]} and {@code spans[at + 1]} the start and end offsets in {@code bytes}
     * of the scalar value the parser stands on (a string with its quotes); a structure is skipped and
     * not noted. {@code base} is where the parser's input starts in {@code bytes}.
     */
    static void note(JsonParser p, byte[] bytes, int base, int[] spans, int at) {
        if (p.currentToken().isStructStart()) {
            p.skipChildren();
            return;
        }
        int start = base + (int) p.currentTokenLocation().getByteOffset();
        int end = start;
        if (bytes[start] == '"') {
            end++;
            while (bytes[end] != '"') {
                end += bytes[end] == '\\' ? 2 : 1;
            }
            end++;
        } else {
            while (end < bytes.length && ",}] \t\r\n".indexOf(bytes[end]) < 0) {
                end++;
            }
        }
        spans[at] = start;
        spans[at + 1] = end;
    }

    /** The offset just after the object's opening brace, which the parser stands on. */
    static int bodyStart(JsonParser p, int base) {
        return base + (int) p.currentTokenLocation().getByteOffset() + 1;
    }
}
