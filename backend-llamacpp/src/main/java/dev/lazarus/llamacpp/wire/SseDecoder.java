package dev.lazarus.llamacpp.wire;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Server-sent events from a byte stream, after the WHATWG rules: lines end in LF, CR or CRLF
 * (even when a piece boundary falls between the CR and the LF), a blank line dispatches the event,
 * {@code :} lines are comments (keep-alives), several {@code data:} lines join with LF. Lines are
 * cut on bytes before anything is decoded, so a UTF-8 character split across two pieces arrives whole.
 *
 * <p>A streaming scanner: each piece is scanned once for line ends, and a line that lies within one
 * piece is read where it lies. An event's data is a slice of the piece it came in, so the common
 * event (one {@code data:} line in one piece) costs no copy at all; bytes are copied only for a line
 * cut by a piece boundary (its head is carried to the next piece) and for multi-line data (joined).
 * Nothing is decoded to text unless asked for ({@link Event#data()}); a JSON parser reads
 * {@link Event#bytes()} directly.
 *
 * <p>Older llama-server builds report an error inside a stream as an {@code error: {...}} line
 * rather than a {@code data:} line; such a field is kept as an event named {@code error}.
 *
 * <p>Stateful: one instance per stream, fed from one thread at a time. Events may point into the
 * arrays given to {@link #feed}, so a caller must not change an array once it has fed it.
 */
public final class SseDecoder {

    /** A line longer than this is a broken stream, not a chunk worth buffering. */
    public static final int MAX_LINE_BYTES = 16 * 1024 * 1024;

    private static final byte[] DATA = field("data");
    private static final byte[] EVENT = field("event");
    private static final byte[] ERROR = field("error");
    private static final byte[] DONE = "[DONE]".getBytes(StandardCharsets.US_ASCII);

    /** The head of a line cut by a piece boundary; null when the last piece ended at a line end. */
    private byte[] carry;
    private int carryLength;
    private boolean skipLeadingLf;

    // the event being read: its name (null: "message") and its data so far, a slice of some array
    private String eventName;
    private boolean hasData;
    private byte[] data;
    private int dataOffset;
    private int dataLength;
    /** Whether {@link #data} is an array of this decoder's own (multi-line data) that may grow in place. */
    private boolean dataOwned;

    /** One dispatched event; {@code name} is {@code message} unless the stream named it. */
    public static final class Event {
        private final String name;
        private final byte[] bytes;
        private final int offset;
        private final int length;

        Event(String name, byte[] bytes, int offset, int length) {
            this.name = name;
            this.bytes = bytes;
            this.offset = offset;
            this.length = length;
        }

        public String name() {
            return name;
        }

        /** The array holding the data (UTF-8), from {@link #offset()} for {@link #length()} bytes. Not to be changed. */
        public byte[] bytes() {
            return bytes;
        }

        public int offset() {
            return offset;
        }

        public int length() {
            return length;
        }

        /** The data as text (decodes it; the relay path reads {@link #bytes()} instead). */
        public String data() {
            return new String(bytes, offset, length, StandardCharsets.UTF_8);
        }

        public boolean isDone() {
            int from = offset;
            int to = offset + length;
            while (from < to && bytes[from] <= ' ') {
                from++;
            }
            while (to > from && bytes[to - 1] <= ' ') {
                to--;
            }
            return Arrays.equals(bytes, from, to, DONE, 0, DONE.length);
        }

        public boolean isError() {
            return "error".equals(name);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Event e && name.equals(e.name)
                    && Arrays.equals(bytes, offset, offset + length, e.bytes, e.offset, e.offset + e.length);
        }

        @Override
        public int hashCode() {
            int h = name.hashCode();
            for (int i = offset; i < offset + length; i++) {
                h = 31 * h + bytes[i];
            }
            return h;
        }

        @Override
        public String toString() {
            return "Event[" + name + ", " + data() + "]";
        }
    }

    /** Feeds one piece of the stream; returns the events it completes (often none or one). */
    public List<Event> feed(byte[] piece) {
        return feed(piece, 0, piece.length);
    }

    /** Feeds {@code piece[from, to)}. */
    public List<Event> feed(byte[] piece, int from, int to) {
        List<Event> events = null;
        int pos = from;
        if (skipLeadingLf && pos < to) {
            skipLeadingLf = false;
            if (piece[pos] == '\n') {
                pos++;
            }
        }
        while (pos < to) {
            int end = lineEnd(piece, pos, to);
            if (end < 0) {
                carry(piece, pos, to);
                break;
            }
            Event event;
            if (carry != null) {
                carry(piece, pos, end);
                // the carried array goes with the line (its data may be a slice of it): the next cut line starts a new one
                byte[] line = carry;
                int length = carryLength;
                carry = null;
                carryLength = 0;
                event = onLine(line, 0, length);
            } else {
                if (end - pos > MAX_LINE_BYTES) {
                    throw tooLong();
                }
                event = onLine(piece, pos, end);
            }
            if (event != null) {
                if (events == null) {
                    events = new ArrayList<>(2);
                }
                events.add(event);
            }
            pos = end + 1;
            if (piece[end] == '\r') {
                if (pos < to) {
                    if (piece[pos] == '\n') {
                        pos++;
                    }
                } else {
                    skipLeadingLf = true;
                }
            }
        }
        return events == null ? List.of() : events;
    }

    /** Whether bytes of an unfinished event are still buffered (the stream was cut inside an event). */
    public boolean hasPartialEvent() {
        return carryLength > 0 || hasData;
    }

    private static int lineEnd(byte[] b, int from, int to) {
        for (int i = from; i < to; i++) {
            byte c = b[i];
            if (c == '\n' || c == '\r') {
                return i;
            }
        }
        return -1;
    }

    /** Appends {@code b[from, to)} to the head of the line carried over from earlier pieces. */
    private void carry(byte[] b, int from, int to) {
        int length = to - from;
        if (length == 0 && carry != null) {
            return;
        }
        if ((long) carryLength + length > MAX_LINE_BYTES) {
            throw tooLong();
        }
        if (carry == null) {
            carry = new byte[Math.max(256, length)];
        } else if (carry.length - carryLength < length) {
            carry = Arrays.copyOf(carry, (int) Math.min(MAX_LINE_BYTES, Math.max(2L * carry.length, (long) carryLength + length)));
        }
        System.arraycopy(b, from, carry, carryLength, length);
        carryLength += length;
    }

    private Event onLine(byte[] b, int from, int to) {
        if (from == to) {
            return dispatch();
        }
        if (b[from] == ':') {
            return null;
        }
        int colon = from;
        while (colon < to && b[colon] != ':') {
            colon++;
        }
        int value = colon < to ? colon + 1 : to;
        if (value < to && b[value] == ' ') {
            value++;
        }
        if (isField(b, from, colon, DATA)) {
            appendData(b, value, to);
        } else if (isField(b, from, colon, EVENT)) {
            eventName = new String(b, value, to - value, StandardCharsets.UTF_8);
        } else if (isField(b, from, colon, ERROR)) {
            eventName = "error";
            appendData(b, value, to);
        }
        // id, retry and unknown fields mean nothing to a one-shot completion stream
        return null;
    }

    private static boolean isField(byte[] b, int from, int to, byte[] name) {
        return Arrays.equals(b, from, to, name, 0, name.length);
    }

    private void appendData(byte[] b, int from, int to) {
        int length = to - from;
        if (!hasData) {
            // the usual case: one data line, kept as a slice of the array it came in
            hasData = true;
            data = b;
            dataOffset = from;
            dataLength = length;
            dataOwned = false;
            return;
        }
        int needed = dataLength + 1 + length;
        if (needed > MAX_LINE_BYTES) {
            throw tooLong();
        }
        if (!dataOwned || data.length < needed) {
            byte[] joined = new byte[Math.max(needed, Math.min(MAX_LINE_BYTES, 2 * needed))];
            System.arraycopy(data, dataOffset, joined, 0, dataLength);
            data = joined;
            dataOffset = 0;
            dataOwned = true;
        }
        data[dataLength] = '\n';
        System.arraycopy(b, from, data, dataLength + 1, length);
        dataLength = needed;
    }

    private Event dispatch() {
        Event event = hasData
                ? new Event(eventName == null ? "message" : eventName, data, dataOffset, dataLength)
                : null;
        hasData = false;
        data = null;
        dataOwned = false;
        eventName = null;
        return event;
    }

    private static MalformedStreamException tooLong() {
        return new MalformedStreamException("an event-stream line exceeds " + MAX_LINE_BYTES + " bytes");
    }

    private static byte[] field(String name) {
        return name.getBytes(StandardCharsets.US_ASCII);
    }

    /** The byte stream does not follow the event-stream format. */
    public static final class MalformedStreamException extends RuntimeException {
        MalformedStreamException(String message) {
            super(message);
        }
    }
}
