package dev.lazarus.backend.api.openai;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One part of an array-shaped message content. {@code text} parts carry {@link #text}; any other
 * type ({@code image_url}, {@code input_audio}, {@code file}) keeps its payload in {@link #payload}
 * unchanged so that it reaches backends that understand it.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ContentPart(
        String type,
        String text,
        @JsonProperty("image_url") Map<String, Object> imageUrl,
        Map<String, Object> payload) {

    public static ContentPart text(String text) {
        return new ContentPart("text", text, null, null);
    }

    static ContentPart fromMap(Map<?, ?> map) {
        Object type = map.get("type");
        if (!(type instanceof String t)) {
            throw new IllegalArgumentException("every content part needs a string 'type'");
        }
        Object text = map.get("text");
        if ("text".equals(t) && !(text instanceof String)) {
            throw new IllegalArgumentException("a 'text' content part needs a string 'text'");
        }
        Map<String, Object> imageUrl = null;
        if (map.get("image_url") instanceof Map<?, ?> img) {
            imageUrl = copy(img);
        }
        Map<String, Object> rest = new LinkedHashMap<>();
        map.forEach((k, v) -> {
            String key = String.valueOf(k);
            if (!key.equals("type") && !key.equals("text") && !key.equals("image_url")) {
                rest.put(key, v);
            }
        });
        return new ContentPart(t, text instanceof String s ? s : null, imageUrl, rest.isEmpty() ? null : rest);
    }

    private static Map<String, Object> copy(Map<?, ?> in) {
        Map<String, Object> out = new LinkedHashMap<>();
        in.forEach((k, v) -> out.put(String.valueOf(k), v));
        return out;
    }

    /** Serialised form: type, text, image_url and any other fields of the original part. */
    @com.fasterxml.jackson.annotation.JsonValue
    Map<String, Object> toJson() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("type", type);
        if (text != null) {
            out.put("text", text);
        }
        if (imageUrl != null) {
            out.put("image_url", imageUrl);
        }
        if (payload != null) {
            out.putAll(payload);
        }
        return out;
    }
}
