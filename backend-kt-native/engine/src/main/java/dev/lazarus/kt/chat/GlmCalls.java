package dev.lazarus.kt.chat;

import dev.lazarus.backend.api.openai.Tool;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * GLM-4.5/4.6: the name, then each argument as a key and a value in tags,
 * <pre>{@code <tool_call>get_weather
 * <arg_key>city</arg_key>
 * <arg_value>Paris</arg_value></tool_call>}</pre>
 * The arguments become one compact JSON object, as llama-server writes it: a value is a string when the
 * tool's schema says the parameter is one (or the value is not JSON), else the JSON value it spells.
 */
final class GlmCalls implements ToolCallSyntax.Tagged {

    static final String KEY_OPEN = "<arg_key>";
    static final String KEY_CLOSE = "</arg_key>";
    static final String VALUE_OPEN = "<arg_value>";
    static final String VALUE_CLOSE = "</arg_value>";

    @Override
    public String open() {
        return HermesCalls.OPEN;
    }

    @Override
    public List<String> markers() {
        return List.of(HermesCalls.OPEN, HermesCalls.CLOSE, KEY_OPEN, KEY_CLOSE, VALUE_OPEN, VALUE_CLOSE);
    }

    @Override
    public String close() {
        return HermesCalls.CLOSE;
    }

    @Override
    public List<AnswerPiece.Call> parse(String body, List<Tool> tools) {
        int firstKey = body.indexOf(KEY_OPEN);
        String name = (firstKey < 0 ? body : body.substring(0, firstKey)).strip();
        if (name.isEmpty() || name.contains("<") || name.contains("\n")) {
            return null;
        }
        Map<String, Object> properties = properties(tools, name);
        ObjectNode arguments = CallJson.JSON.createObjectNode();
        String rest = firstKey < 0 ? "" : body.substring(firstKey);
        while (!rest.isBlank()) {
            rest = rest.strip();
            int keyEnd = rest.indexOf(KEY_CLOSE);
            if (!rest.startsWith(KEY_OPEN) || keyEnd < 0) {
                return null;
            }
            String key = rest.substring(KEY_OPEN.length(), keyEnd).strip();
            rest = rest.substring(keyEnd + KEY_CLOSE.length()).strip();
            int valueEnd = rest.indexOf(VALUE_CLOSE);
            if (!rest.startsWith(VALUE_OPEN) || valueEnd < 0) {
                return null;
            }
            String value = rest.substring(VALUE_OPEN.length(), valueEnd);
            rest = rest.substring(valueEnd + VALUE_CLOSE.length());
            arguments.set(key, value(value, properties.get(key)));
        }
        return List.of(new AnswerPiece.Call(name, CallJson.JSON.writeValueAsString(arguments)));
    }

    private static JsonNode value(String text, Object schema) {
        boolean isString = schema instanceof Map<?, ?> s && "string".equals(s.get("type"));
        if (!isString && CallJson.isJson(text)) {
            return CallJson.JSON.readTree(text);
        }
        return CallJson.JSON.getNodeFactory().stringNode(text);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> properties(List<Tool> tools, String name) {
        Tool.Function function = CallJson.offered(tools, name);
        return function != null && function.parameters() != null
                && function.parameters().get("properties") instanceof Map<?, ?> props
                ? (Map<String, Object>) props : Map.of();
    }
}
