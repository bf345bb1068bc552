package dev.lazarus.kt.sampling;

import java.util.List;

/**
 * Finds stop strings in streamed text, across token boundaries, without ever emitting them: text
 * that could be the start of a stop string is held back until the next piece shows whether it is.
 * Not thread-safe: one per sequence.
 */
public final class StopMatcher {

    private final List<String> stops;
    private final StringBuilder held = new StringBuilder();
    private boolean stopped;
    private String matched;

    public StopMatcher(List<String> stops) {
        this.stops = List.copyOf(stops);
    }

    /** The part of the text seen so far that is safe to emit now. After a stop, always "". */
    public String push(String text) {
        if (stopped) {
            return "";
        }
        held.append(text);
        int stopAt = earliestStop();
        if (stopAt >= 0) {
            stopped = true;
            String out = held.substring(0, stopAt);
            held.setLength(0);
            return out;
        }
        int keep = longestPossibleStart();
        String out = held.substring(0, held.length() - keep);
        held.delete(0, held.length() - keep);
        return out;
    }

    /** Whether a stop string has been seen (its text and everything after are dropped). */
    public boolean stopped() {
        return stopped;
    }

    /** The stop string that was seen (the earliest in the text; of two there, the first listed), or null. */
    public String matched() {
        return matched;
    }

    /** The held-back text, for when generation ends without a stop string (it was no stop after all). */
    public String flush() {
        String out = held.toString();
        held.setLength(0);
        return out;
    }

    private int earliestStop() {
        int best = -1;
        for (String stop : stops) {
            int at = held.indexOf(stop);
            if (at >= 0 && (best < 0 || at < best)) {
                best = at;
                matched = stop;
            }
        }
        return best;
    }

    /** Length of the longest suffix of the held text that is a proper prefix of a stop string. */
    private int longestPossibleStart() {
        int best = 0;
        for (String stop : stops) {
            for (int len = Math.min(stop.length() - 1, held.length()); len > best; len--) {
                if (held.indexOf(stop.substring(0, len), held.length() - len) == held.length() - len) {
                    best = len;
                    break;
                }
            }
        }
        return best;
    }
}
