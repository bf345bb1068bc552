package dev.lazarus.gateway.realserver;

import java.util.ArrayList;
import java.util.List;

/** Splits an OpenAI event stream into its {@code data:} payloads, failing on anything else. */
final class SseEvents {

    private SseEvents() {
    }

    static List<String> parse(String body) {
        if (body == null || !body.endsWith("\n\n")) {
            throw new AssertionError("stream does not end with a blank line: " + body);
        }
        List<String> events = new ArrayList<>();
        for (String event : body.split("\n\n")) {
            if (!event.startsWith("data: ") || event.contains("\n")) {
                throw new AssertionError("not an OpenAI SSE event: '" + event + "'");
            }
            events.add(event.substring("data: ".length()));
        }
        return events;
    }
}
