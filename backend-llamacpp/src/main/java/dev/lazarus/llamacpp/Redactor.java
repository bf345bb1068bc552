package dev.lazarus.llamacpp;

import java.util.regex.Pattern;

/**
 * Takes credentials out of text that came from llama-server (error messages, its console output)
 * before the text reaches a log line or a client: this backend's own api-key wherever it appears,
 * and whatever follows {@code Bearer}/{@code Basic} or an {@code api-key}/{@code X-Api-Key}/{@code
 * Authorization} label. A server, or a proxy in front of it, may well echo a request header.
 */
final class Redactor {

    static final String MASK = "***";

    private static final Pattern SCHEME = Pattern.compile("(?i)\\b(bearer|basic)(\\s+)[^\\s\"',;}]+");
    private static final Pattern LABELLED = Pattern.compile(
            "(?i)\\b((?:x-)?api[-_]?key|authorization|token)(\"?\\s*[:=]\\s*\"?)(?!(?:bearer|basic)\\s)[^\\s\"',;}]+");

    private final String secret;

    /** @param secret this backend's api-key; null for none */
    Redactor(String secret) {
        this.secret = secret == null || secret.isBlank() ? null : secret;
    }

    String redact(String text) {
        if (text == null || text.isEmpty()) {
            return text;
        }
        String out = secret != null ? text.replace(secret, MASK) : text;
        out = SCHEME.matcher(out).replaceAll("$1$2" + MASK);
        return LABELLED.matcher(out).replaceAll("$1$2" + MASK);
    }
}
