package dev.lazarus.kt.chat;

import java.util.List;

/** The search the streaming parsers share: text held back because it may still become a marker. */
final class Markers {

    private Markers() {
    }

    /** The length of the longest tail of {@code text} that begins one of {@code markers} (shorter than that marker). */
    static int partialAtEnd(CharSequence text, List<String> markers) {
        int longest = 0;
        for (String marker : markers) {
            for (int n = Math.min(marker.length() - 1, text.length()); n > longest; n--) {
                if (marker.startsWith(text.subSequence(text.length() - n, text.length()).toString())) {
                    longest = n;
                    break;
                }
            }
        }
        return longest;
    }
}
