package dev.lazarus.backend.api.openai;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * A JSON object exactly as an upstream server wrote it (an answer, or a chunk of a stream), and
 * where in it the values of its identity fields stand ({@code id}, {@code created}, {@code model}),
 * so that the gateway can pass the bytes on with its own identity written over the server's instead
 * of reading the object into types and writing it again.
 *
 * @param bytes  the array holding the object (UTF-8); never changed
 * @param offset where the object starts in {@code bytes}
 * @param length its length
 * @param spans  {@code [bodyStart, idStart, idEnd, createdStart, createdEnd, modelStart, modelEnd,
 *               cutStart, cutEnd]}, offsets in {@code bytes}: bodyStart is just after the opening brace;
 *               each value from its first byte (a string's opening quote) to just after its last; -1
 *               for the start and end of a field the object lacks; the cut, when set, is a field (with
 *               its comma) left out of what is written
 */
public record RawJson(byte[] bytes, int offset, int length, int[] spans) {

    private static final byte[][] NAMES = {
            "\"id\":".getBytes(StandardCharsets.US_ASCII),
            "\"created\":".getBytes(StandardCharsets.US_ASCII),
            "\"model\":".getBytes(StandardCharsets.US_ASCII)};

    private static final byte[] EMPTY = {};

    public RawJson {
        if (spans.length != 9) {
            throw new IllegalArgumentException("spans: bodyStart and four (start, end) pairs");
        }
    }

    /** A fresh span array: no field found yet. */
    public static int[] noSpans() {
        return new int[] {-1, -1, -1, -1, -1, -1, -1, -1, -1};
    }

    /**
     * Writes the object with the three identity values replaced by these JSON texts (a quoted
     * string, a number); a field the object lacks is added at its start.
     */
    public void writeWithIdentity(OutputStream out, byte[] id, byte[] created, byte[] model) {
        try {
            byte[][] values = {id, created, model, EMPTY};
            int bodyStart = spans[0];
            out.write(bytes, offset, bodyStart - offset);
            for (int f = 0; f < 3; f++) {
                if (spans[1 + 2 * f] < 0) {
                    out.write(NAMES[f]);
                    out.write(values[f]);
                    out.write(',');
                }
            }
            int at = bodyStart;
            // The present fields (and the cut) in the order they stand: at most four, a selection by hand.
            for (int written = 0; written < 4; written++) {
                int next = -1;
                for (int f = 0; f < 4; f++) {
                    int start = spans[1 + 2 * f];
                    if (start >= at && (next < 0 || start < spans[1 + 2 * next])) {
                        next = f;
                    }
                }
                if (next < 0) {
                    break;
                }
                out.write(bytes, at, spans[1 + 2 * next] - at);
                out.write(values[next]);
                at = spans[2 + 2 * next];
            }
            out.write(bytes, at, offset + length - at);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The object's {@code created} as OpenAI writes it, a whole number of seconds, or -1 where it has none or
     * another form (a fraction, an exponent, a string).
     */
    public long wholeSecondsCreated() {
        int start = spans[3];
        int end = spans[4];
        if (start < 0 || end <= start || end - start > 18) {
            return -1;
        }
        long seconds = 0;
        for (int i = start; i < end; i++) {
            byte digit = bytes[i];
            if (digit < '0' || digit > '9') {
                return -1;
            }
            seconds = seconds * 10 + (digit - '0');
        }
        return seconds;
    }

    public byte[] withIdentity(byte[] id, byte[] created, byte[] model) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(length + 64);
        writeWithIdentity(out, id, created, model);
        return out.toByteArray();
    }

    @Override
    public String toString() {
        return "RawJson[" + length + " bytes]";
    }
}
