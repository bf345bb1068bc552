package dev.lazarus.gateway.api.anthropic;

import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.ContentPart;
import dev.lazarus.backend.api.openai.MessageContent;
import dev.lazarus.backend.api.openai.Tool;
import dev.lazarus.backend.api.openai.ToolCall;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import tools.jackson.databind.json.JsonMapper;

/**
 * An Anthropic Messages request as the chat-completions request the gateway routes: {@code system} becomes the
 * system message, content blocks become chat content parts, {@code tool_use} blocks an assistant's
 * {@code tool_calls}, {@code tool_result} blocks {@code tool} messages, {@code thinking} blocks the assistant's
 * {@code reasoning_content}; tools, tool choice, stop sequences and sampling map onto their chat twins. Fields it
 * does not know are passed on as chat extras (llama-server reads many), except Anthropic's own that mean nothing to
 * a chat backend. Every problem is a 400 naming the field, as Anthropic words it.
 */
public final class MessagesRequestTranslator {

    /** Anthropic-only fields that have no meaning for a chat backend: dropped, not passed on. */
    private static final Set<String> DROPPED = Set.of("service_tier", "container", "mcp_servers",
            "context_management", "cache_control");
    private static final Set<String> KNOWN = Set.of("model", "max_tokens", "system", "messages", "tools",
            "tool_choice", "stop_sequences", "temperature", "top_p", "top_k", "thinking", "metadata", "stream");

    private final JsonMapper json;

    public MessagesRequestTranslator(JsonMapper json) {
        this.json = json;
    }

    /** The chat request for a Messages request body; {@code max_tokens} is required as Anthropic requires it. */
    public ChatCompletionRequest toChat(Map<String, Object> body) {
        return toChat(body, true);
    }

    /**
     * @param requireMaxTokens false for {@code count_tokens}, whose body has no {@code max_tokens}
     */
    public ChatCompletionRequest toChat(Map<String, Object> body, boolean requireMaxTokens) {
        ChatCompletionRequest.Builder chat = ChatCompletionRequest.builder();
        chat.model(string(body, "model", true));
        Object maxTokens = body.get("max_tokens");
        if (maxTokens == null && requireMaxTokens) {
            throw AnthropicErrors.invalid("max_tokens: Field required");
        }
        if (maxTokens != null) {
            if (!(maxTokens instanceof Integer n) || n < 1) {
                throw AnthropicErrors.invalid("max_tokens: Input should be a valid integer greater than or equal to 1");
            }
            chat.maxTokens(n);
        }
        List<ChatMessage> messages = new ArrayList<>();
        Object system = body.get("system");
        if (system != null) {
            messages.add(ChatMessage.system(text(system, "system")));
        }
        List<?> turns = list(body.get("messages"), "messages");
        if (turns == null) {
            throw AnthropicErrors.invalid("messages: Field required");
        }
        for (int i = 0; i < turns.size(); i++) {
            addTurn(messages, object(turns.get(i), "messages." + i), "messages." + i);
        }
        chat.messages(messages);
        chat.temperature(number(body, "temperature"));
        chat.topP(number(body, "top_p"));
        if (body.get("top_k") != null) {
            chat.extra("top_k", body.get("top_k"));
        }
        List<?> stops = list(body.get("stop_sequences"), "stop_sequences");
        if (stops != null && !stops.isEmpty()) {
            chat.stop(stops.stream().map(s -> {
                if (!(s instanceof String text)) {
                    throw AnthropicErrors.invalid("stop_sequences: Input should be a list of strings");
                }
                return text;
            }).toList());
        }
        tools(body, chat);
        thinking(body.get("thinking"), chat);
        if (body.get("metadata") instanceof Map<?, ?> metadata && metadata.get("user_id") instanceof String user) {
            chat.user(user);
        }
        body.forEach((key, value) -> {
            if (!KNOWN.contains(key) && !DROPPED.contains(key)) {
                chat.extra(key, value);
            }
        });
        return chat.build();
    }

    /** Whether the client asked for an event stream. */
    public static boolean streams(Map<String, Object> body) {
        return Boolean.TRUE.equals(body.get("stream"));
    }

    private void addTurn(List<ChatMessage> messages, Map<?, ?> turn, String param) {
        Object role = turn.get("role");
        Object content = turn.get("content");
        if (content == null) {
            throw AnthropicErrors.invalid(param + ".content: Field required");
        }
        if ("user".equals(role)) {
            addUser(messages, content, param);
        } else if ("assistant".equals(role)) {
            messages.add(assistant(content, param));
        } else {
            throw AnthropicErrors.invalid(param + ".role: Input should be 'user' or 'assistant'");
        }
    }

    /** A user turn: its tool results first, as the {@code tool} messages that answer the calls before them. */
    private void addUser(List<ChatMessage> messages, Object content, String param) {
        if (content instanceof String text) {
            messages.add(ChatMessage.user(text));
            return;
        }
        List<ContentPart> parts = new ArrayList<>();
        List<?> blocks = list(content, param + ".content");
        for (int i = 0; i < blocks.size(); i++) {
            String at = param + ".content." + i;
            Map<?, ?> block = object(blocks.get(i), at);
            switch (blockType(block, at)) {
                case "text" -> parts.add(ContentPart.text(string(block, "text", at)));
                case "image" -> parts.add(image(block, at));
                case "document" -> parts.add(ContentPart.text(document(block, at)));
                case "tool_result" -> messages.add(toolResult(block, at));
                case "thinking", "redacted_thinking" -> { } // only the assistant's own turns carry them
                default -> throw AnthropicErrors.invalid(at + ".type: Input tag '" + block.get("type")
                        + "' is not supported here");
            }
        }
        if (!parts.isEmpty()) {
            messages.add(new ChatMessage("user", content(parts), null, null, null, null, null));
        }
    }

    private ChatMessage assistant(Object content, String param) {
        if (content instanceof String text) {
            return ChatMessage.assistant(text);
        }
        StringBuilder text = new StringBuilder();
        StringBuilder reasoning = new StringBuilder();
        List<ToolCall> calls = new ArrayList<>();
        List<?> blocks = list(content, param + ".content");
        for (int i = 0; i < blocks.size(); i++) {
            String at = param + ".content." + i;
            Map<?, ?> block = object(blocks.get(i), at);
            switch (blockType(block, at)) {
                case "text" -> text.append(string(block, "text", at));
                case "thinking" -> reasoning.append(string(block, "thinking", at));
                case "redacted_thinking" -> { } // encrypted for Anthropic's models: nothing a local model can read
                case "tool_use" -> calls.add(new ToolCall(null, string(block, "id", at), "function",
                        new ToolCall.FunctionCall(string(block, "name", at),
                                json.writeValueAsString(block.get("input") == null ? Map.of() : block.get("input")))));
                default -> throw AnthropicErrors.invalid(at + ".type: Input tag '" + block.get("type")
                        + "' is not supported in an assistant turn");
            }
        }
        return new ChatMessage("assistant", calls.isEmpty() || !text.isEmpty() ? MessageContent.ofText(text.toString())
                : null, null, calls.isEmpty() ? null : calls, null, reasoning.isEmpty() ? null : reasoning.toString(),
                null);
    }

    private static ChatMessage toolResult(Map<?, ?> block, String at) {
        String id = string(block, "tool_use_id", at);
        Object content = block.get("content");
        MessageContent result;
        if (content == null) {
            result = MessageContent.ofText("");
        } else if (content instanceof String text) {
            result = MessageContent.ofText(text);
        } else {
            List<ContentPart> parts = new ArrayList<>();
            List<?> blocks = list(content, at + ".content");
            for (int i = 0; i < blocks.size(); i++) {
                String inner = at + ".content." + i;
                Map<?, ?> part = object(blocks.get(i), inner);
                switch (blockType(part, inner)) {
                    case "text" -> parts.add(ContentPart.text(string(part, "text", inner)));
                    case "image" -> parts.add(image(part, inner));
                    case "document" -> parts.add(ContentPart.text(document(part, inner)));
                    default -> throw AnthropicErrors.invalid(inner + ".type: Input tag '" + part.get("type")
                            + "' is not supported in a tool result");
                }
            }
            result = content(parts);
        }
        if (Boolean.TRUE.equals(block.get("is_error")) && result.isText()) {
            // The chat API has no error flag on a tool message: say it in the text the model reads.
            result = MessageContent.ofText("Error: " + result.asText());
        }
        return new ChatMessage("tool", result, null, null, id, null, null);
    }

    /** Text alone as one string (every chat template renders that), images as parts. */
    private static MessageContent content(List<ContentPart> parts) {
        if (parts.stream().allMatch(p -> "text".equals(p.type()))) {
            return MessageContent.ofText(String.join("\n", parts.stream().map(ContentPart::text).toList()));
        }
        return MessageContent.ofParts(parts);
    }

    /** An image block as the chat API's {@code image_url} part: a data URL for base64, the URL itself otherwise. */
    private static ContentPart image(Map<?, ?> block, String at) {
        Map<?, ?> source = object(block.get("source"), at + ".source");
        String url = switch (String.valueOf(source.get("type"))) {
            case "base64" -> "data:" + string(source, "media_type", at + ".source") + ";base64,"
                    + string(source, "data", at + ".source");
            case "url" -> string(source, "url", at + ".source");
            default -> throw AnthropicErrors.invalid(at + ".source.type: Input tag '" + source.get("type")
                    + "' is not supported: send 'base64' or 'url'");
        };
        Map<String, Object> imageUrl = new LinkedHashMap<>();
        imageUrl.put("url", url);
        return new ContentPart("image_url", null, imageUrl, null);
    }

    /** A plain-text document as its text; other documents (PDF) no chat backend reads. */
    private static String document(Map<?, ?> block, String at) {
        Map<?, ?> source = object(block.get("source"), at + ".source");
        if ("text".equals(source.get("type"))) {
            return string(source, "data", at + ".source");
        }
        throw AnthropicErrors.invalid(at + ".source.type: only plain-text documents are supported by this gateway");
    }

    private static void tools(Map<String, Object> body, ChatCompletionRequest.Builder chat) {
        List<?> tools = list(body.get("tools"), "tools");
        if (tools != null) {
            List<Tool> functions = new ArrayList<>();
            for (int i = 0; i < tools.size(); i++) {
                Map<?, ?> tool = object(tools.get(i), "tools." + i);
                Object type = tool.get("type");
                if (type != null && !"custom".equals(type) && tool.get("input_schema") == null) {
                    continue; // a server tool (web search, code execution) that only Anthropic runs
                }
                Object schema = tool.get("input_schema");
                if (!(schema instanceof Map<?, ?> parameters)) {
                    throw AnthropicErrors.invalid("tools." + i + ".input_schema: Field required");
                }
                functions.add(new Tool("function", new Tool.Function(string(tool, "name", "tools." + i),
                        tool.get("description") instanceof String d ? d : null, stringKeys(parameters), null)));
            }
            if (!functions.isEmpty()) {
                chat.tools(functions);
            }
        }
        Object choice = body.get("tool_choice");
        if (choice == null) {
            return;
        }
        Map<?, ?> toolChoice = object(choice, "tool_choice");
        chat.toolChoice(switch (String.valueOf(toolChoice.get("type"))) {
            case "auto" -> "auto";
            case "any" -> "required";
            case "none" -> "none";
            case "tool" -> Map.of("type", "function", "function", Map.of("name", string(toolChoice, "name",
                    "tool_choice")));
            default -> throw AnthropicErrors.invalid("tool_choice.type: Input tag '" + toolChoice.get("type")
                    + "' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'");
        });
        if (Boolean.TRUE.equals(toolChoice.get("disable_parallel_tool_use"))) {
            chat.parallelToolCalls(false);
        }
    }

    /**
     * Extended thinking on or off, as the chat template's {@code enable_thinking} switch that llama-server and
     * the reasoning models' templates read; the budget has no per-request twin in the chat API.
     */
    private static void thinking(Object thinking, ChatCompletionRequest.Builder chat) {
        if (thinking == null) {
            return;
        }
        Map<?, ?> config = object(thinking, "thinking");
        switch (String.valueOf(config.get("type"))) {
            case "enabled" -> {
                if (!(config.get("budget_tokens") instanceof Integer budget) || budget < 1) {
                    throw AnthropicErrors.invalid("thinking.enabled.budget_tokens: Field required");
                }
                chat.extra("chat_template_kwargs", Map.of("enable_thinking", true));
            }
            case "adaptive" -> chat.extra("chat_template_kwargs", Map.of("enable_thinking", true));
            case "disabled" -> chat.extra("chat_template_kwargs", Map.of("enable_thinking", false));
            default -> throw AnthropicErrors.invalid("thinking.type: Input tag '" + config.get("type")
                    + "' does not match any of the expected tags: 'enabled', 'adaptive', 'disabled'");
        }
    }

    /** The system prompt: a string, or text blocks joined by newlines. */
    private static String text(Object value, String param) {
        if (value instanceof String s) {
            return s;
        }
        List<?> blocks = list(value, param);
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < blocks.size(); i++) {
            Map<?, ?> block = object(blocks.get(i), param + "." + i);
            if (!"text".equals(block.get("type"))) {
                throw AnthropicErrors.invalid(param + "." + i + ".type: Input should be 'text'");
            }
            texts.add(string(block, "text", param + "." + i));
        }
        return String.join("\n", texts);
    }

    private static String blockType(Map<?, ?> block, String at) {
        if (!(block.get("type") instanceof String type)) {
            throw AnthropicErrors.invalid(at + ".type: Field required");
        }
        return type;
    }

    private static Map<String, Object> stringKeys(Map<?, ?> map) {
        Map<String, Object> out = new LinkedHashMap<>();
        map.forEach((k, v) -> out.put(String.valueOf(k), v));
        return out;
    }

    private static String string(Map<?, ?> body, String field, boolean required) {
        Object value = body.get(field);
        if (value == null && !required) {
            return null;
        }
        if (!(value instanceof String s)) {
            throw AnthropicErrors.invalid(field
                    + (value == null ? ": Field required" : ": Input should be a valid string"));
        }
        return s;
    }

    private static String string(Map<?, ?> block, String field, String at) {
        Object value = block.get(field);
        if (!(value instanceof String s)) {
            throw AnthropicErrors.invalid(at + "." + field
                    + (value == null ? ": Field required" : ": Input should be a valid string"));
        }
        return s;
    }

    private static Double number(Map<String, Object> body, String field) {
        Object value = body.get(field);
        if (value == null) {
            return null;
        }
        if (!(value instanceof Number n)) {
            throw AnthropicErrors.invalid(field + ": Input should be a valid number");
        }
        return n.doubleValue();
    }

    private static List<?> list(Object value, String param) {
        if (value == null) {
            return null;
        }
        if (!(value instanceof List<?> list)) {
            throw AnthropicErrors.invalid(param + ": Input should be a valid list");
        }
        return list;
    }

    private static Map<?, ?> object(Object value, String param) {
        if (!(value instanceof Map<?, ?> map)) {
            throw AnthropicErrors.invalid(param + ": Input should be a valid dictionary or object");
        }
        return map;
    }
}
