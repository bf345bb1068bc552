package dev.lazarus.kt.tokenizer;

import java.util.List;
import java.util.Map;

/**
 * The tokenizer's typed reads of GGUF metadata by full key ({@code tokenizer.ggml.*}), values as the gguf package
 * returns them, errors as {@link TokenizerException}.
 */
record TokenizerKeys(Map<String, Object> map) {

    String string(String key, String def) {
        return map.get(key) instanceof String s ? s : def;
    }

    /** An integer key, or {@code def} when absent; Integer and Long both accepted. */
    long integer(String key, long def) {
        Object v = map.get(key);
        if (v == null) {
            return def;
        }
        if (v instanceof Number n && (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte)) {
            return n.longValue();
        }
        throw new TokenizerException("metadata key " + key + " should be an integer, is " + v.getClass().getSimpleName());
    }

    Boolean bool(String key) {
        Object v = map.get(key);
        if (v == null) {
            return null;
        }
        if (v instanceof Boolean b) {
            return b;
        }
        throw new TokenizerException("metadata key " + key + " should be a boolean, is " + v.getClass().getSimpleName());
    }

    List<?> array(String key, boolean required) {
        Object v = map.get(key);
        if (v == null) {
            if (required) {
                throw new TokenizerException("metadata key " + key + " is missing");
            }
            return null;
        }
        if (v instanceof List<?> list) {
            return list;
        }
        throw new TokenizerException("metadata key " + key + " should be an array, is " + v.getClass().getSimpleName());
    }
}
