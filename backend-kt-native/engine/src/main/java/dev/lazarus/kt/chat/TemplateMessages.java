package dev.lazarus.kt.chat;

import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.Tool;
import dev.lazarus.backend.api.openai.ToolCall;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * Request messages and tools as the plain maps and lists a Hugging Face template sees: keys only
 * where the request has a value (templates test {@code 'tool_calls' in message} and
 * {@code is defined}), content as text, tool calls with their {@code function} object.
 */
final class TemplateMessages {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private TemplateMessages() {}

    static List<Map<String, Object>> messages(List<ChatMessage> messages) {
        List<Map<String, Object>> out = new ArrayList<>(messages.size());
        for (ChatMessage m : messages) {
            Map<String, Object> map = new LinkedHashMap<>();
            if (m.extra() != null) {
                map.putAll(m.extra());
            }
            map.put("role", m.role());
            boolean hasToolCalls = m.toolCalls() != null && !m.toolCalls().isEmpty();
            // an assistant turn that only calls tools has no content (None), as HF templates expect
            map.put("content", m.content() == null && hasToolCalls ? null : m.text());
            if (m.name() != null) {
                map.put("name", m.name());
            }
            if (hasToolCalls) {
                map.put("tool_calls", m.toolCalls().stream().map(TemplateMessages::toolCall).toList());
            }
            if (m.toolCallId() != null) {
                map.put("tool_call_id", m.toolCallId());
            }
            if (m.reasoningContent() != null) {
                map.put("reasoning_content", m.reasoningContent());
            }
            out.add(map);
        }
        return out;
    }

    static List<Map<String, Object>> tools(List<Tool> tools) {
        List<Map<String, Object>> out = new ArrayList<>(tools.size());
        for (Tool tool : tools) {
            Map<String, Object> map = new LinkedHashMap<>();
            map.put("type", tool.type() == null ? "function" : tool.type());
            if (tool.function() != null) {
                Map<String, Object> fn = new LinkedHashMap<>();
                fn.put("name", tool.function().name());
                if (tool.function().description() != null) {
                    fn.put("description", tool.function().description());
                }
                if (tool.function().parameters() != null) {
                    fn.put("parameters", tool.function().parameters());
                }
                if (tool.function().strict() != null) {
                    fn.put("strict", tool.function().strict());
                }
                map.put("function", fn);
            }
            out.add(map);
        }
        return out;
    }

    private static Map<String, Object> toolCall(ToolCall call) {
        Map<String, Object> map = new LinkedHashMap<>();
        if (call.id() != null) {
            map.put("id", call.id());
        }
        map.put("type", call.type() == null ? "function" : call.type());
        if (call.function() != null) {
            Map<String, Object> fn = new LinkedHashMap<>();
            fn.put("name", call.function().name());
            fn.put("arguments", arguments(call.function().arguments()));
            map.put("function", fn);
        }
        return map;
    }

    /** A JSON-object argument string as {@link ToolCallArguments}; anything else stays the string it is. */
    @SuppressWarnings("unchecked")
    private static Object arguments(String json) {
        if (json == null) {
            return "";
        }
        try {
            Object parsed = JSON.readValue(json, Object.class);
            return parsed instanceof Map<?, ?> map ? new ToolCallArguments((Map<String, Object>) map, json) : json;
        } catch (JacksonException e) {
            return json;
        }
    }
}
