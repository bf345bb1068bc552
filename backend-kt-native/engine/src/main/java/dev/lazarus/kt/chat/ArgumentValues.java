package dev.lazarus.kt.chat;

import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;

/**
 * Argument values of the formats that write each parameter in a tag of its own (Qwen3.5's and MiniMax-M2's XML calls):
 * the JSON value a parameter's text starts with, and the JSON types its schema allows, which decide whether
 * llama-server reads the text raw or as JSON.
 */
final class ArgumentValues {

    enum JsonType { STRING, OBJECT, ARRAY, NUMBER, BOOLEAN, NULL }

    /** A JSON value at the start of a text: its type, and where it ends. */
    record JsonValue(JsonType type, int end) {}

    private ArgumentValues() {
    }

    /** The JSON value {@code text} starts with, or null; llama-server reads no space before it. */
    static JsonValue jsonAt(String text) {
        if (text.isEmpty() || Character.isWhitespace(text.charAt(0))) {
            return null;
        }
        // read inside an array: a value at the root must be followed by a space, a tag may follow this one at once
        try (JsonParser p = CallJson.JSON.createParser("[" + text)) {
            p.nextToken();
            JsonToken token = p.nextToken();
            JsonType type = token == null ? null : switch (token) {
                case START_OBJECT -> JsonType.OBJECT;
                case START_ARRAY -> JsonType.ARRAY;
                case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> JsonType.NUMBER;
                case VALUE_TRUE, VALUE_FALSE -> JsonType.BOOLEAN;
                case VALUE_NULL -> JsonType.NULL;
                case VALUE_STRING -> JsonType.STRING;
                default -> null;
            };
            if (type == null) {
                return null;
            }
            if (token.isScalarValue() && token != JsonToken.VALUE_STRING) { // the parser has looked past its end
                return new JsonValue(type, (int) p.currentTokenLocation().getCharOffset() - 1 + p.getText().length());
            }
            p.getString(); // a string is read to its end only when asked for
            p.skipChildren();
            return new JsonValue(type, (int) p.currentLocation().getCharOffset() - 1);
        } catch (JacksonException e) {
            return null;
        }
    }

    /** Whether a parameter of this schema may be a string: llama-server then reads its text raw, up to the close tag. */
    static boolean mayBeString(Map<?, ?> schema) {
        return types(schema).contains(JsonType.STRING);
    }

    /** The JSON types a parameter's schema allows (all of them when it names none). */
    static Set<JsonType> types(Map<?, ?> schema) {
        EnumSet<JsonType> types = EnumSet.noneOf(JsonType.class);
        Object type = schema.get("type");
        for (Object t : type instanceof List<?> list ? list : type == null ? List.of() : List.of(type)) {
            switch (String.valueOf(t)) {
                case "string" -> types.add(JsonType.STRING);
                case "object" -> types.add(JsonType.OBJECT);
                case "array" -> types.add(JsonType.ARRAY);
                case "number", "integer" -> types.add(JsonType.NUMBER);
                case "boolean" -> types.add(JsonType.BOOLEAN);
                case "null" -> types.add(JsonType.NULL);
                default -> { }
            }
        }
        for (String union : List.of("anyOf", "oneOf")) {
            if (schema.get(union) instanceof List<?> members) {
                members.stream().filter(Map.class::isInstance).forEach(m -> types.addAll(types((Map<?, ?>) m)));
            }
        }
        return types.isEmpty() ? EnumSet.allOf(JsonType.class) : types;
    }
}
