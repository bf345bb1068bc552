package dev.lazarus.kt.backend;

import java.util.List;

/**
 * Holds generated text back while it could still become a stop string, so a stop string split over
 * several tokens is never emitted. {@link #push} returns what is safe to send.
 */
final class StopStrings {

    private final List<String> stops;
    private final StringBuilder held = new StringBuilder();
    private boolean stopped;

    StopStrings(List<String> stops) {
        this.stops = stops == null ? List.of() : stops.stream().filter(s -> !s.isEmpty()).toList();
    }

    /** Adds text; returns the part that can be emitted now. After a stop string, {@link #stopped()} is true. */
    String push(String text) {
        held.append(text);
        int cut = -1;
        for (String stop : stops) {
            int at = held.indexOf(stop);
            if (at >= 0 && (cut < 0 || at < cut)) {
                cut = at;
            }
        }
        if (cut >= 0) {
            stopped = true;
            String out = held.substring(0, cut);
            held.setLength(0);
            return out;
        }
        int keep = 0;
        for (String stop : stops) {
            for (int n = Math.min(stop.length() - 1, held.length()); n > keep; n--) {
                if (held.substring(held.length() - n).equals(stop.substring(0, n))) {
                    keep = n;
                    break;
                }
            }
        }
        String out = held.substring(0, held.length() - keep);
        held.delete(0, held.length() - keep);
        return out;
    }

    boolean stopped() {
        return stopped;
    }

    /** Whatever was held back (the generation ended without completing a stop string). */
    String flush() {
        String out = held.toString();
        held.setLength(0);
        return out;
    }
}
