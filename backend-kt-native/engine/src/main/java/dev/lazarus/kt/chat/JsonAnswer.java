package dev.lazarus.kt.chat;

import java.util.List;

/**
 * The content of an answer written under a JSON schema, as llama-server's chat parser gives it: the grammar lets
 * the model write {@code space ("```json" space VALUE space "```" | space VALUE space)}, and the content is VALUE
 * alone. Streams the growth of that value; whitespace and backticks at its end are held until more text shows
 * whether they belong to it.
 */
public final class JsonAnswer implements AnswerParser {

    private static final String FENCE = "```json";
    private final StringBuilder raw = new StringBuilder();
    private int sent;

    @Override
    public List<AnswerPiece> push(String text) {
        raw.append(text);
        return emit(value(false));
    }

    @Override
    public List<AnswerPiece> finish() {
        return emit(value(true));
    }

    private List<AnswerPiece> emit(String value) {
        if (value.length() <= sent) {
            return List.of();
        }
        String piece = value.substring(sent);
        sent = value.length();
        return List.of(new AnswerPiece.Text(piece));
    }

    /** The value so far: leading space and fence dropped, trailing space and fence held back (dropped at the end). */
    private String value(boolean finished) {
        String s = stripLeading(raw.toString());
        if (s.startsWith(FENCE)) {
            s = stripLeading(s.substring(FENCE.length()));
        } else if (FENCE.startsWith(s)) {
            return "";
        }
        int end = s.length();
        while (end > 0 && (Character.isWhitespace(s.charAt(end - 1)) || s.charAt(end - 1) == '`')) {
            end--;
        }
        String value = s.substring(0, end);
        // what was already sent stays sent, even if it later proves to be trailing space
        return finished || value.length() >= sent ? value : s.substring(0, Math.min(s.length(), sent));
    }

    private static String stripLeading(String s) {
        int i = 0;
        while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
            i++;
        }
        return s.substring(i);
    }
}
