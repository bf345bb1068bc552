package dev.lazarus.kt.chat;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Tool-call arguments given to a template. OpenAI sends them as a JSON string; templates differ in
 * what they expect: Qwen and Llama write {@code arguments | tojson} and need the object, DeepSeek
 * concatenates {@code '...' + arguments} and needs the original string. This map is the parsed
 * object and prints as the original string, so both kinds of template render as intended.
 */
final class ToolCallArguments extends LinkedHashMap<String, Object> {

    private final String json;

    ToolCallArguments(Map<String, Object> parsed, String json) {
        super(parsed);
        this.json = json;
    }

    @Override
    public String toString() {
        return json;
    }
}
