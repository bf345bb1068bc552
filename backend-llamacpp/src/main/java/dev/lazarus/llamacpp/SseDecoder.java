package dev.lazarus.llamacpp;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Server-sent events from a byte stream, after the WHATWG rules: lines end in LF, CR or CRLF
 * (even when a frame boundary falls between the CR and the LF), a blank line dispatches the event,
 * {@code :} lines are comments (keep-alives), several {@code data:} lines join with LF. Lines are
 * cut on bytes before decoding, so a UTF-8 character split across two TCP frames arrives whole.
 *
 * <p>Older llama-server builds report an error inside a stream as an {@code error: {...}} line
 * rather than a {@code data:} line; such a field is kept as an event named {@code error}.
 *
 * <p>Stateful: one instance per stream, fed from one thread at a time.
 */
final class SseDecoder {

    /** One dispatched event; {@code name} is {@code message} unless the stream named it. */
    record Event(String name, String data) {

        boolean isDone() {
            return "[DONE]".equals(data.strip());
        }

        boolean isError() {
            return "error".equals(name);
        }
    }

    /** A line longer than this is a broken stream, not a chunk worth buffering. */
    static final int MAX_LINE_BYTES = 16 * 1024 * 1024;

    private final ByteArrayOutputStream line = new ByteArrayOutputStream(512);
    private final StringBuilder data = new StringBuilder();
    private String eventName;
    private boolean hasData;
    private boolean skipLeadingLf;

    /** Feeds one frame; returns the events it completes (often none or one). */
    List<Event> feed(byte[] frame) {
        List<Event> events = new ArrayList<>(1);
        for (byte b : frame) {
            if (skipLeadingLf) {
                skipLeadingLf = false;
                if (b == '\n') {
                    continue;
                }
            }
            if (b == '\n' || b == '\r') {
                skipLeadingLf = b == '\r';
                String text = line.toString(StandardCharsets.UTF_8);
                line.reset();
                Event event = onLine(text);
                if (event != null) {
                    events.add(event);
                }
            } else {
                if (line.size() >= MAX_LINE_BYTES) {
                    throw new MalformedStreamException("an event-stream line exceeds " + MAX_LINE_BYTES + " bytes");
                }
                line.write(b);
            }
        }
        return events;
    }

    /** Whether bytes of an unfinished event are still buffered (the stream was cut inside an event). */
    boolean hasPartialEvent() {
        return line.size() > 0 || hasData;
    }

    private Event onLine(String text) {
        if (text.isEmpty()) {
            return dispatch();
        }
        if (text.charAt(0) == ':') {
            return null;
        }
        int colon = text.indexOf(':');
        String field = colon < 0 ? text : text.substring(0, colon);
        String value = colon < 0 ? "" : text.substring(colon + 1);
        if (value.startsWith(" ")) {
            value = value.substring(1);
        }
        switch (field) {
            case "data" -> appendData(value);
            case "event" -> eventName = value;
            case "error" -> {
                eventName = "error";
                appendData(value);
            }
            default -> {
                // id, retry and unknown fields mean nothing to a one-shot completion stream
            }
        }
        return null;
    }

    private void appendData(String value) {
        if (hasData) {
            data.append('\n');
        }
        data.append(value);
        hasData = true;
    }

    private Event dispatch() {
        Event event = hasData ? new Event(eventName == null ? "message" : eventName, data.toString()) : null;
        data.setLength(0);
        hasData = false;
        eventName = null;
        return event;
    }

    /** The byte stream does not follow the event-stream format. */
    static final class MalformedStreamException extends RuntimeException {
        MalformedStreamException(String message) {
            super(message);
        }
    }
}
