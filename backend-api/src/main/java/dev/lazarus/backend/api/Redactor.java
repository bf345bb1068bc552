package dev.lazarus.backend.api;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The one place where text from outside the gateway (an upstream's error bodies, health messages,
 * self-descriptions, console output, exception messages) is made safe to show, log or store.
 * Immutable and thread-safe; the gateway builds one with every secret it knows (the API keys, the
 * admin token, each backend's credentials) and hands it to the backends in their {@link BackendConfig}.
 *
 * <p>It masks
 * <ul>
 *   <li>a known secret wherever it appears, and a piece of one of at least {@value #MIN_FRAGMENT}
 *       characters that was cut at either end (an upstream or a log line truncated it mid-key);</li>
 *   <li>a known secret's URL-encoded form, and its base64 and base64url forms at any of the three
 *       alignments inside a longer base64 text (the part of the encoding that only the secret decides);</li>
 *   <li>credential shapes: what follows {@code Bearer}/{@code Basic}, the value of an
 *       {@code Authorization} header, of an {@code api-key}/{@code token}/{@code secret}/{@code password}
 *       label, of a {@code key=} assignment, OpenAI-style {@code sk-...} keys and other vendors' key shapes
 *       (AWS access key ids, GitHub, GitLab, Slack, Hugging Face, Google API keys, JSON Web Tokens).</li>
 * </ul>
 * Shortening must come after redaction ({@link #quote}): cut first, and the last character of a key
 * is all that a known-secret match loses while the rest goes out in clear.
 */
public final class Redactor {

    public static final String MASK = "***";

    /** Shortest cut piece of a known secret that is masked; shorter ones match ordinary words too often. */
    public static final int MIN_FRAGMENT = 8;

    /** Shortest configured secret that is looked for. */
    public static final int MIN_SECRET = 4;

    /** Text longer than this is redacted and shown only up to here: nobody reads megabytes of an error page. */
    static final int MAX_REDACTED = 256 * 1024;

    private static final Pattern AUTHORIZATION = Pattern.compile(
            "(?i)\\b((?:proxy-)?authorization)(\"?\\s*[:=]\\s*\"?)[^\"\\r\\n,;}]+");
    private static final Pattern SCHEME = Pattern.compile("(?i)\\b(bearer|basic)(\\s+)(?!\\*\\*\\*)[^\\s\"',;}&]+");
    private static final Pattern LABELLED = Pattern.compile(
            "(?i)(?<![\\w-])((?:x-)?api[-_]?key|(?:access[-_]|refresh[-_]|auth[-_])?token|secret|password|passwd)"
                    + "(\"?\\s*[:=]\\s*\"?)(?!(?:bearer|basic)\\s)(?!\\*\\*\\*)[^\\s\"',;}&]+");
    /** A bare {@code key} only as an assignment ({@code ?key=...}): "unknown key: top_k" is an ordinary message. */
    private static final Pattern KEY_ASSIGNED = Pattern.compile(
            "(?i)(?<![\\w-])(key)(\\s*=\\s*)(?!\\*\\*\\*)[^\\s\"',;}&]+");
    private static final Pattern SK_KEY = Pattern.compile("(?<![\\w-])sk-[A-Za-z0-9_-]{6,}");
    private static final Pattern VENDOR_KEY = Pattern.compile("(?<![\\w-])(?:(?:AKIA|ASIA)[0-9A-Z]{16}"
            + "|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|glpat-[A-Za-z0-9_-]{20,}"
            + "|xox[abposr]-[A-Za-z0-9-]{10,}|hf_[A-Za-z0-9]{30,}|AIza[0-9A-Za-z_-]{35}"
            + "|eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,})");

    private static final Redactor SHAPES_ONLY = new Redactor(List.of());

    /** The secrets as configured. */
    private final List<String> secrets;
    /** The secrets and their encoded forms, longest first, so that a secret containing another is masked whole. */
    private final List<String> forms;

    private Redactor(List<String> secrets) {
        this.secrets = secrets;
        Set<String> all = new LinkedHashSet<>(secrets);
        for (String secret : secrets) {
            all.addAll(encodedForms(secret));
        }
        List<String> sorted = new ArrayList<>(all);
        sorted.sort(Comparator.comparingInt(String::length).reversed());
        this.forms = List.copyOf(sorted);
    }

    /**
     * How a secret shows encoded: URL-encoded, and the characters of its base64 and base64url encodings that
     * only its own bytes decide, with 0, 1 or 2 bytes before it in the encoded text (those of the first and
     * last 4-character group are shared with the neighbours and left out). Forms shorter than
     * {@value #MIN_FRAGMENT} characters are not looked for.
     */
    private static List<String> encodedForms(String secret) {
        List<String> forms = new ArrayList<>();
        String url = java.net.URLEncoder.encode(secret, java.nio.charset.StandardCharsets.UTF_8);
        if (!url.equals(secret)) {
            forms.add(url);
        }
        byte[] bytes = secret.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        for (int offset = 0; offset < 3; offset++) {
            byte[] shifted = new byte[offset + bytes.length];
            System.arraycopy(bytes, 0, shifted, offset, bytes.length);
            String encoded = java.util.Base64.getEncoder().encodeToString(shifted);
            int from = offset == 0 ? 0 : 4;
            int to = shifted.length % 3 == 0 ? encoded.length() : encoded.length() - 4;
            if (to - from >= MIN_FRAGMENT) {
                String standard = encoded.substring(from, to);
                forms.add(standard);
                forms.add(standard.replace('+', '-').replace('/', '_'));
            }
        }
        return forms;
    }

    /** Masks credential shapes only: for a component that knows no secret. */
    public static Redactor shapesOnly() {
        return SHAPES_ONLY;
    }

    /**
     * Masks credential shapes and these secrets. Null entries and those shorter than
     * {@value #MIN_SECRET} characters are ignored: masking "abc" everywhere would garble every message.
     */
    public static Redactor of(Collection<String> secrets) {
        Set<String> known = new LinkedHashSet<>();
        for (String secret : secrets) {
            if (secret != null && secret.strip().length() >= MIN_SECRET) {
                known.add(secret.strip());
            }
        }
        List<String> sorted = new ArrayList<>(known);
        sorted.sort(Comparator.comparingInt(String::length).reversed());
        return sorted.isEmpty() ? SHAPES_ONLY : new Redactor(List.copyOf(sorted));
    }

    /** This redactor with more secrets. */
    public Redactor with(Collection<String> more) {
        List<String> all = new ArrayList<>(secrets);
        all.addAll(more);
        return of(all);
    }

    /** How many secrets it knows (not which). */
    public int knownSecrets() {
        return secrets.size();
    }

    /** The text with every secret and credential masked; null stays null. */
    public String redact(String text) {
        if (text == null || text.isEmpty()) {
            return text;
        }
        String out = text.length() > MAX_REDACTED ? text.substring(0, MAX_REDACTED) : text;
        out = maskKnown(out);
        out = AUTHORIZATION.matcher(out).replaceAll("$1$2" + MASK);
        out = SCHEME.matcher(out).replaceAll("$1$2" + MASK);
        out = LABELLED.matcher(out).replaceAll("$1$2" + MASK);
        out = KEY_ASSIGNED.matcher(out).replaceAll("$1$2" + MASK);
        out = SK_KEY.matcher(out).replaceAll(MASK);
        return VENDOR_KEY.matcher(out).replaceAll(MASK);
    }

    /**
     * Redacted, stripped and then cut to {@code maxChars} (with {@code ...} when cut): the order that
     * lets no piece of a secret through. Blank text reads {@code (empty body)}.
     */
    public String quote(String text, int maxChars) {
        if (text == null || text.isBlank()) {
            return "(empty body)";
        }
        String safe = redact(text).strip();
        return safe.length() <= maxChars ? safe : safe.substring(0, maxChars) + "...";
    }

    /** Whether the text holds a known secret or a piece of one, or a credential shape. */
    public boolean reveals(String text) {
        return text != null && !text.equals(redact(text));
    }

    /** String values (also inside lists and maps) redacted; other values as they are. */
    public Map<String, Object> redactValues(Map<String, Object> values) {
        if (values == null || values.isEmpty()) {
            return values;
        }
        Map<String, Object> out = new LinkedHashMap<>();
        values.forEach((key, value) -> out.put(key, redactValue(value)));
        return out;
    }

    @SuppressWarnings("unchecked")
    private Object redactValue(Object value) {
        return switch (value) {
            case String s -> redact(s);
            case Map<?, ?> m -> redactValues((Map<String, Object>) m);
            case Collection<?> c -> c.stream().map(this::redactValue).toList();
            case null, default -> value;
        };
    }

    /**
     * A copy of the failure to log or keep: the same types' names and stack frames, the messages
     * redacted, the causes likewise. A library's message (a JSON parser's) quotes the text it choked on.
     */
    public Throwable redact(Throwable failure) {
        if (failure == null) {
            return null;
        }
        String message = failure.getMessage() == null ? failure.getClass().getName()
                : failure.getClass().getName() + ": " + redact(failure.getMessage());
        RedactedFailure copy = new RedactedFailure(message, failure.getCause() == failure ? null : redact(failure.getCause()));
        copy.setStackTrace(failure.getStackTrace());
        return copy;
    }

    /** A failure whose message was redacted; its message begins with the original type's name. */
    static final class RedactedFailure extends RuntimeException {
        RedactedFailure(String message, Throwable cause) {
            super(message, cause);
        }

        @Override
        public String toString() {
            return getMessage();
        }
    }

    /** Whole secrets anywhere; a cut piece where it meets the text's edge or a non-key character. */
    private String maskKnown(String text) {
        if (secrets.isEmpty()) {
            return text;
        }
        boolean[] masked = new boolean[text.length()];
        boolean any = false;
        for (String form : forms) {
            any |= markWhole(text, form, masked);
        }
        for (String secret : secrets) {
            if (secret.length() > MIN_FRAGMENT) {
                any |= markCutPieces(text, secret, masked);
            }
        }
        if (!any) {
            return text;
        }
        StringBuilder out = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            if (!masked[i]) {
                out.append(text.charAt(i));
            } else if (i == 0 || !masked[i - 1]) {
                out.append(MASK);
            }
        }
        return out.toString();
    }

    private static boolean markWhole(String text, String secret, boolean[] masked) {
        boolean any = false;
        for (int at = text.indexOf(secret); at >= 0; at = text.indexOf(secret, at + 1)) {
            java.util.Arrays.fill(masked, at, at + secret.length(), true);
            any = true;
        }
        return any;
    }

    /**
     * A prefix of the secret that ends where the text ends or a non-key character follows (the key was
     * cut after it), and a suffix that begins at the text's start or after a non-key character (cut
     * before it). Requiring the cut edge keeps a secret that starts with a common word
     * ({@code lazarus-...}) from masking that word in ordinary text.
     */
    private static boolean markCutPieces(String text, String secret, boolean[] masked) {
        boolean any = false;
        int n = text.length();
        for (int i = 0; i < n; i++) {
            if (i == 0 || !isKeyChar(text.charAt(i - 1))) {
                int k = commonPrefix(text, i, secret);
                if (k >= MIN_FRAGMENT && k < secret.length() && (i + k == n || !isKeyChar(text.charAt(i + k)))) {
                    java.util.Arrays.fill(masked, i, i + k, true);
                    any = true;
                }
            }
            int end = i + 1;
            if (end == n || !isKeyChar(text.charAt(end))) {
                int k = commonSuffix(text, end, secret);
                int start = end - k;
                if (k >= MIN_FRAGMENT && k < secret.length() && (start == 0 || !isKeyChar(text.charAt(start - 1)))) {
                    java.util.Arrays.fill(masked, start, end, true);
                    any = true;
                }
            }
        }
        return any;
    }

    private static int commonPrefix(String text, int from, String secret) {
        int k = 0;
        while (k < secret.length() && from + k < text.length() && text.charAt(from + k) == secret.charAt(k)) {
            k++;
        }
        return k;
    }

    private static int commonSuffix(String text, int end, String secret) {
        int k = 0;
        while (k < secret.length() && end - k > 0 && text.charAt(end - 1 - k) == secret.charAt(secret.length() - 1 - k)) {
            k++;
        }
        return k;
    }

    /** Characters keys are made of (base64, base64url, hex, dashed ids); a cut shows as anything else. */
    private static boolean isKeyChar(char c) {
        return Character.isLetterOrDigit(c) || c == '-' || c == '_' || c == '+' || c == '/' || c == '=';
    }
}
