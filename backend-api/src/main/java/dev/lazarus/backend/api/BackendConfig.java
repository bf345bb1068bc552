package dev.lazarus.backend.api;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A backend's configuration: its id, kind and the kind-specific settings as given in the
 * gateway's configuration ({@code lazarus.backends[n].settings}). Keys are kebab-case. The typed
 * getters report a missing or malformed value as {@link BackendConfigException} naming the key.
 *
 * @param redactor what the backend passes every piece of upstream text through before it logs it,
 *                 reports it in its health or errors, or describes itself with it; the gateway's
 *                 knows every configured secret. Without one, this backend's own secret settings.
 */
public record BackendConfig(String id, String kind, Map<String, Object> settings, Redactor redactor) {

    /** Setting names whose values are masked when the config is printed (an upstream {@code api-key}, a token, a password). */
    private static final Pattern SECRET_KEY = Pattern.compile("key|token|secret|password|credential");
    /** Setting names whose values are credentials to look for in upstream text (not {@code max-tokens}). */
    private static final Pattern CREDENTIAL_KEY = Pattern.compile("(?:^|[-_.])(?:api-?key|key|token|secret|password|credentials?)$");

    public BackendConfig {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(kind, "kind");
        settings = settings == null ? Map.of() : Map.copyOf(settings);
        redactor = redactor == null ? Redactor.of(secretValues(settings)) : redactor.with(secretValues(settings));
    }

    public BackendConfig(String id, String kind, Map<String, Object> settings) {
        this(id, kind, settings, null);
    }

    /** The values of the settings that hold credentials ({@code api-key}, {@code *-token}, {@code password}...). */
    public static java.util.List<String> secretValues(Map<String, Object> settings) {
        if (settings == null) {
            return java.util.List.of();
        }
        return settings.entrySet().stream()
                .filter(e -> e.getValue() instanceof CharSequence
                        && CREDENTIAL_KEY.matcher(e.getKey().toLowerCase(Locale.ROOT)).find())
                .map(e -> e.getValue().toString())
                .toList();
    }

    public boolean has(String key) {
        return settings.get(key) != null;
    }

    public String string(String key, String defaultValue) {
        Object v = settings.get(key);
        return v == null ? defaultValue : String.valueOf(v);
    }

    public String requireString(String key) {
        String v = string(key, null);
        if (v == null || v.isBlank()) {
            throw new BackendConfigException(id, key, "setting '" + key + "' is required");
        }
        return v;
    }

    public int integer(String key, int defaultValue) {
        Object v = settings.get(key);
        if (v == null) {
            return defaultValue;
        }
        if (v instanceof Number n) {
            return n.intValue();
        }
        try {
            return Integer.parseInt(String.valueOf(v).trim());
        } catch (NumberFormatException e) {
            throw new BackendConfigException(id, key, "setting '" + key + "' must be an integer, got '" + v + "'");
        }
    }

    public boolean bool(String key, boolean defaultValue) {
        Object v = settings.get(key);
        if (v == null) {
            return defaultValue;
        }
        if (v instanceof Boolean b) {
            return b;
        }
        String s = String.valueOf(v).trim();
        if (s.equalsIgnoreCase("true") || s.equalsIgnoreCase("false")) {
            return Boolean.parseBoolean(s);
        }
        throw new BackendConfigException(id, key, "setting '" + key + "' must be true or false, got '" + v + "'");
    }

    /** A duration as ISO-8601 ({@code PT30S}) or with a unit suffix: {@code 500ms}, {@code 30s}, {@code 5m}, {@code 1h}. */
    public Duration duration(String key, Duration defaultValue) {
        Object v = settings.get(key);
        if (v == null) {
            return defaultValue;
        }
        if (v instanceof Duration d) {
            return d;
        }
        String s = String.valueOf(v).trim().toLowerCase(java.util.Locale.ROOT);
        try {
            if (s.startsWith("pt") || s.startsWith("p")) {
                return Duration.parse(s.toUpperCase(java.util.Locale.ROOT));
            }
            if (s.endsWith("ms")) {
                return Duration.ofMillis(Long.parseLong(s.substring(0, s.length() - 2).trim()));
            }
            long amount = Long.parseLong(s.substring(0, s.length() - 1).trim());
            return switch (s.charAt(s.length() - 1)) {
                case 's' -> Duration.ofSeconds(amount);
                case 'm' -> Duration.ofMinutes(amount);
                case 'h' -> Duration.ofHours(amount);
                default -> Duration.ofMillis(Long.parseLong(s));
            };
        } catch (NumberFormatException | DateTimeParseException | StringIndexOutOfBoundsException e) {
            throw new BackendConfigException(id, key, "setting '" + key + "' must be a duration like 30s or PT30S, got '" + v + "'");
        }
    }

    /** A list of strings: a YAML list, a map indexed 0..n (how Spring binds lists into maps), or one comma-separated string. */
    public List<String> strings(String key) {
        Object v = settings.get(key);
        if (v == null) {
            return List.of();
        }
        if (v instanceof List<?> list) {
            return list.stream().map(String::valueOf).toList();
        }
        if (v instanceof Map<?, ?> map) {
            return map.entrySet().stream()
                    .sorted(java.util.Comparator.comparingInt(e -> Integer.parseInt(String.valueOf(e.getKey()))))
                    .map(e -> String.valueOf(e.getValue()))
                    .toList();
        }
        String s = String.valueOf(v).trim();
        return s.isEmpty() ? List.of() : java.util.Arrays.stream(s.split(",")).map(String::trim).toList();
    }

    /** Secret-looking settings ({@code api-key}, {@code *-token}, ...) are masked: configs end up in log lines. */
    @Override
    public String toString() {
        Map<String, Object> shown = new LinkedHashMap<>();
        settings.forEach((key, value) -> shown.put(key,
                SECRET_KEY.matcher(key.toLowerCase(Locale.ROOT)).find() ? "***" : value));
        return "BackendConfig[id=" + id + ", kind=" + kind + ", settings=" + shown + "]";
    }
}
