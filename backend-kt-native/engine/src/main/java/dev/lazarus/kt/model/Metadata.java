package dev.lazarus.kt.model;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Typed, architecture-prefixed reads of GGUF metadata (as {@code GgufFile.metadata()} returns it),
 * so a model configuration can be built and tested from a plain map. GGUF stores the same logical
 * value with different integer widths in different files; every number is accepted as a number.
 */
public record Metadata(Map<String, Object> values, String architecture) {

    public static Metadata of(Map<String, Object> values) {
        Object arch = values.get("general.architecture");
        if (!(arch instanceof String s) || s.isBlank()) {
            throw new ModelFormatException("GGUF metadata has no general.architecture");
        }
        return new Metadata(values, s);
    }

    /** The full key for an architecture-relative one: {@code block_count} → {@code qwen3moe.block_count}. */
    public String key(String suffix) {
        return architecture + "." + suffix;
    }

    public Optional<Number> number(String suffix) {
        Object v = values.get(key(suffix));
        if (v instanceof Number n) {
            return Optional.of(n);
        }
        if (v instanceof List<?> list && !list.isEmpty() && list.getFirst() instanceof Number n) {
            // Per-layer arrays (e.g. head_count_kv of hybrid models): the first layer's value stands for all.
            return Optional.of(n);
        }
        if (v != null) {
            throw new ModelFormatException("metadata key " + key(suffix) + " is not a number: " + v);
        }
        return Optional.empty();
    }

    public int requireInt(String suffix) {
        return number(suffix).map(Number::intValue)
                .orElseThrow(() -> new ModelFormatException("GGUF metadata lacks required key " + key(suffix)));
    }

    public int integer(String suffix, int def) {
        return number(suffix).map(Number::intValue).orElse(def);
    }

    public float real(String suffix, float def) {
        return number(suffix).map(Number::floatValue).orElse(def);
    }

    public boolean bool(String suffix, boolean def) {
        Object v = values.get(key(suffix));
        return v instanceof Boolean b ? b : def;
    }

    public Optional<String> string(String suffix) {
        Object v = values.get(key(suffix));
        return v instanceof String s ? Optional.of(s) : Optional.empty();
    }

    /** A key without the architecture prefix ({@code general.name}). */
    public Optional<Object> raw(String fullKey) {
        return Optional.ofNullable(values.get(fullKey));
    }
}
