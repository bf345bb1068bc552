package dev.lazarus.kt.chat;

import dev.lazarus.backend.api.openai.Tool;
import java.util.List;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads a call written as one JSON object ({@code {"name": ..., "arguments": {...}}}), keeping the
 * arguments exactly as the model wrote them (spacing, digits, key order), as llama-server passes them on.
 */
final class CallJson {

    static final JsonMapper JSON = JsonMapper.builder().build();

    private CallJson() {
    }

    /**
     * The call in {@code json}, or null when it is not one object with a non-blank string {@code name} and
     * arguments (under one of {@code argumentFields}) that are an object, a JSON string of one, null or absent.
     */
    static AnswerPiece.Call read(String json, List<String> argumentFields) {
        String text = json.strip();
        try (JsonParser p = JSON.createParser(text)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            String name = null;
            String arguments = "{}";
            for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                if (field.equals("name") && value == JsonToken.VALUE_STRING) {
                    name = p.getString();
                } else if (argumentFields.contains(field)) {
                    switch (value) {
                        case START_OBJECT -> {
                            int start = (int) p.currentTokenLocation().getCharOffset();
                            p.skipChildren();
                            arguments = text.substring(start, (int) p.currentLocation().getCharOffset());
                        }
                        case VALUE_STRING -> arguments = p.getString(); // already the wire form
                        case VALUE_NULL -> arguments = "{}";
                        default -> {
                            return null;
                        }
                    }
                } else {
                    p.skipChildren();
                }
            }
            if (p.nextToken() != null || name == null || name.isBlank()) {
                return null;
            }
            return new AnswerPiece.Call(name, arguments);
        } catch (JacksonException e) {
            return null;
        }
    }

    /** The request's tool named {@code name}, or null: llama-server recognises calls of the request's tools only. */
    static Tool.Function offered(List<Tool> tools, String name) {
        return tools.stream().map(Tool::function).filter(f -> f != null && name.equals(f.name())).findFirst().orElse(null);
    }

    /** Whether {@code text} is one JSON value and nothing else. */
    static boolean isJson(String text) {
        try (JsonParser p = JSON.createParser(text.strip())) {
            if (p.nextToken() == null) {
                return false;
            }
            p.skipChildren();
            return p.nextToken() == null;
        } catch (JacksonException e) {
            return false;
        }
    }
}
