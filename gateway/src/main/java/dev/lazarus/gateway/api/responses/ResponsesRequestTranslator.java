package dev.lazarus.gateway.api.responses;

import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.ContentPart;
import dev.lazarus.backend.api.openai.MessageContent;
import dev.lazarus.backend.api.openai.ResponseFormat;
import dev.lazarus.backend.api.openai.Tool;
import dev.lazarus.backend.api.openai.ToolCall;
import dev.lazarus.gateway.api.ApiError;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * A Responses request as the chat-completions request the route's backends are asked: the conversation
 * (a stored one first, then the request's {@code instructions} and {@code input} items) as chat messages,
 * function tools as chat tools, {@code text.format} as {@code response_format}. Fields the Responses API
 * alone has are consumed here; any other field goes on as a chat extra (llama.cpp's {@code top_k},
 * {@code min_p}, {@code grammar}, ...).
 */
final class ResponsesRequestTranslator {

    /** Responses fields that have no chat counterpart, or one written here: never sent on as extras. */
    private static final Set<String> CONSUMED = Set.of("model", "input", "instructions", "tools", "tool_choice",
            "max_output_tokens", "temperature", "top_p", "text", "reasoning", "metadata", "parallel_tool_calls",
            "stream", "stream_options", "store", "previous_response_id", "include", "truncation", "background",
            "service_tier", "prompt_cache_key", "prompt_cache_retention", "safety_identifier", "max_tool_calls",
            "top_logprobs", "user", "conversation", "prompt", "context_management");

    private final JsonMapper json;

    ResponsesRequestTranslator(JsonMapper json) {
        this.json = json;
    }

    /**
     * @param request the client's body
     * @param input   the request's input as items ({@link #inputItems})
     * @param prior   the stored conversation {@code previous_response_id} names (its input and output items), or none
     */
    ChatCompletionRequest toChat(ObjectNode request, List<ObjectNode> input, List<JsonNode> prior) {
        String model = string(request, "model");
        if (model == null || model.isBlank()) {
            throw ApiError.invalidRequest("Missing required parameter: 'model'.", "model");
        }
        List<ChatMessage> messages = new ArrayList<>();
        String instructions = string(request, "instructions");
        if (instructions != null && !instructions.isEmpty()) {
            messages.add(ChatMessage.system(instructions));
        }
        Conversation conversation = new Conversation();
        for (int i = 0; i < prior.size(); i++) {
            conversation.add(prior.get(i), "previous_response_id");
        }
        for (int i = 0; i < input.size(); i++) {
            conversation.add(input.get(i), "input[" + i + "]");
        }
        messages.addAll(conversation.messages());
        if (messages.isEmpty()) {
            throw ApiError.invalidRequest("The request has no input: send 'input' as a string or a list of items.",
                    "input");
        }
        ChatCompletionRequest.Builder chat = ChatCompletionRequest.builder()
                .model(model)
                .messages(messages)
                .temperature(number(request, "temperature"))
                .topP(number(request, "top_p"))
                .maxTokens(integer(request, "max_output_tokens"))
                .user(string(request, "user"))
                .tools(tools(request.get("tools")))
                .toolChoice(toolChoice(request.get("tool_choice")))
                .responseFormat(responseFormat(request.get("text")));
        if (request.get("parallel_tool_calls") instanceof JsonNode parallel && parallel.isBoolean()) {
            chat.parallelToolCalls(parallel.booleanValue());
        }
        if (request.get("reasoning") instanceof ObjectNode reasoning && string(reasoning, "effort") != null) {
            chat.extra("reasoning_effort", string(reasoning, "effort"));
        }
        for (Map.Entry<String, JsonNode> field : request.properties()) {
            if (!CONSUMED.contains(field.getKey())) {
                chat.extra(field.getKey(), json.treeToValue(field.getValue(), Object.class));
            }
        }
        return chat.build();
    }

    /** The request's {@code input} as a list of items: a string is one user message. */
    List<ObjectNode> inputItems(ObjectNode request) {
        JsonNode input = request.get("input");
        List<ObjectNode> items = new ArrayList<>();
        if (input == null || input.isNull()) {
            return items;
        }
        if (input.isString()) {
            ObjectNode message = json.createObjectNode();
            message.put("type", "message");
            message.put("role", "user");
            message.putArray("content").addObject().put("type", "input_text").put("text", input.stringValue());
            items.add(message);
            return items;
        }
        if (!input.isArray()) {
            throw ApiError.invalidType("input", "expected a string or an array of input items");
        }
        for (int i = 0; i < input.size(); i++) {
            if (!(input.get(i) instanceof ObjectNode item)) {
                throw ApiError.invalidType("input[" + i + "]", "expected an object");
            }
            items.add(item.deepCopy());
        }
        return items;
    }

    /** Chat messages built item by item; an assistant turn's text, reasoning and calls become one message. */
    private final class Conversation {
        private final List<Draft> drafts = new ArrayList<>();
        private String pendingReasoning;

        void add(JsonNode node, String param) {
            if (!(node instanceof ObjectNode item)) {
                throw ApiError.invalidType(param, "expected an object");
            }
            if (item.get("type") instanceof JsonNode t && !t.isNull() && !t.isString()) {
                throw ApiError.invalidType(param + ".type", "expected a string");
            }
            String type = string(item, "type");
            if (type == null && item.has("role")) {
                type = "message";
            }
            switch (type == null ? "" : type) {
                case "message" -> message(item, param);
                case "function_call" -> functionCall(item, param);
                case "function_call_output" -> {
                    String callId = required(item, "call_id", param);
                    Draft tool = new Draft("tool");
                    tool.content = MessageContent.ofText(outputText(item.get("output"), param + ".output"));
                    tool.toolCallId = callId;
                    drafts.add(tool);
                }
                case "reasoning" -> pendingReasoning = join(pendingReasoning, reasoningText(item));
                default -> throw ApiError.invalidValue("Invalid value for '" + param + ".type': '" + type
                        + "' items are not supported by this gateway; send message, function_call, "
                        + "function_call_output or reasoning items.", param + ".type");
            }
        }

        private void message(ObjectNode item, String param) {
            String role = required(item, "role", param);
            String chatRole = switch (role) {
                case "user", "assistant" -> role;
                case "system", "developer" -> "system";
                default -> throw ApiError.invalidValue("Invalid value for '" + param + ".role': '" + role
                        + "'. Supported values are: 'user', 'assistant', 'system' and 'developer'.", param + ".role");
            };
            Draft draft = "assistant".equals(chatRole) ? assistant(false) : new Draft(chatRole);
            MessageContent content = content(item.get("content"), param + ".content");
            draft.content = draft.content == null ? content
                    : MessageContent.ofText(draft.content.asText() + content.asText());
            if (draft != last()) {
                drafts.add(draft);
            }
        }

        private void functionCall(ObjectNode item, String param) {
            Draft draft = assistant(true);
            String callId = required(item, "call_id", param);
            String name = required(item, "name", param);
            String arguments = string(item, "arguments");
            draft.toolCalls.add(new ToolCall(null, callId, "function",
                    new ToolCall.FunctionCall(name, arguments == null ? "{}" : arguments)));
            if (draft != last()) {
                drafts.add(draft);
            }
        }

        /** The assistant message this item belongs to: the last one while its turn goes on, else a new one. */
        private Draft assistant(boolean call) {
            Draft last = last();
            boolean sameTurn = last != null && "assistant".equals(last.role) && pendingReasoning == null
                    && (call || last.toolCalls.isEmpty());
            Draft draft = sameTurn ? last : new Draft("assistant");
            if (pendingReasoning != null) {
                draft.reasoning = pendingReasoning;
                pendingReasoning = null;
            }
            return draft;
        }

        private Draft last() {
            return drafts.isEmpty() ? null : drafts.getLast();
        }

        List<ChatMessage> messages() {
            return drafts.stream().map(Draft::toMessage).toList();
        }
    }

    private static final class Draft {
        final String role;
        MessageContent content;
        final List<ToolCall> toolCalls = new ArrayList<>();
        String toolCallId;
        String reasoning;

        Draft(String role) {
            this.role = role;
        }

        ChatMessage toMessage() {
            MessageContent body = content == null && toolCalls.isEmpty() ? MessageContent.ofText("") : content;
            return new ChatMessage(role, body, null, toolCalls.isEmpty() ? null : List.copyOf(toolCalls),
                    toolCallId, reasoning, null);
        }
    }

    /** A message's content: a string, or parts (text kinds joined into one string when there is nothing else). */
    private static MessageContent content(JsonNode content, String param) {
        if (content == null || content.isNull()) {
            return MessageContent.ofText("");
        }
        if (content.isString()) {
            return MessageContent.ofText(content.stringValue());
        }
        if (!content.isArray()) {
            throw ApiError.invalidType(param, "expected a string or an array of content parts");
        }
        List<ContentPart> parts = new ArrayList<>();
        boolean textOnly = true;
        for (int i = 0; i < content.size(); i++) {
            String partParam = param + "[" + i + "]";
            JsonNode part = content.get(i);
            String type = part instanceof ObjectNode o ? string(o, "type") : null;
            switch (type == null ? "" : type) {
                case "input_text", "output_text", "text" -> parts.add(ContentPart.text(textOf(part, "text", partParam)));
                case "refusal" -> parts.add(ContentPart.text(textOf(part, "refusal", partParam)));
                case "input_image" -> {
                    String url = string((ObjectNode) part, "image_url");
                    if (url == null) {
                        throw ApiError.invalidRequest("Only images given by 'image_url' are supported.",
                                partParam + ".image_url");
                    }
                    Map<String, Object> image = new LinkedHashMap<>();
                    image.put("url", url);
                    String detail = string((ObjectNode) part, "detail");
                    if (detail != null) {
                        image.put("detail", detail);
                    }
                    parts.add(new ContentPart("image_url", null, image, null));
                    textOnly = false;
                }
                default -> throw ApiError.invalidValue("Invalid value for '" + partParam + ".type': "
                        + (type == null ? "missing" : "'" + type + "'")
                        + ". Supported values are: 'input_text', 'output_text', 'refusal' and 'input_image'.",
                        partParam + ".type");
            }
        }
        return textOnly ? MessageContent.ofText(MessageContent.ofParts(parts).asText()) : MessageContent.ofParts(parts);
    }

    /** A function call's output: a string, or its text parts joined. */
    private static String outputText(JsonNode output, String param) {
        if (output == null || output.isNull()) {
            throw ApiError.invalidRequest("Missing required parameter: '" + param + "'.", param);
        }
        return output.isString() ? output.stringValue() : content(output, param).asText();
    }

    private static String reasoningText(ObjectNode item) {
        StringBuilder text = new StringBuilder();
        JsonNode parts = item.get("content");
        if (parts == null || parts.isNull() || parts.isEmpty()) {
            parts = item.get("summary");
        }
        if (parts != null && parts.isArray()) {
            for (JsonNode part : parts) {
                if (part.get("text") instanceof JsonNode t && t.isString()) {
                    text.append(t.stringValue());
                }
            }
        }
        return text.toString();
    }

    private static String join(String a, String b) {
        return a == null || a.isEmpty() ? b : a + "\n" + b;
    }

    private List<Tool> tools(JsonNode tools) {
        if (tools == null || tools.isNull()) {
            return null;
        }
        if (!tools.isArray()) {
            throw ApiError.invalidType("tools", "expected an array");
        }
        List<Tool> chatTools = new ArrayList<>();
        for (int i = 0; i < tools.size(); i++) {
            // Hosted tools (web search, file search, ...) have no chat counterpart: a local model has none of them.
            if (tools.get(i) instanceof ObjectNode tool && "function".equals(string(tool, "type"))) {
                String name = required(tool, "name", "tools[" + i + "]");
                Map<String, Object> parameters = tool.get("parameters") instanceof ObjectNode p
                        ? json.treeToValue(p, Map.class) : null;
                Boolean strict = tool.get("strict") instanceof JsonNode s && s.isBoolean() ? s.booleanValue() : null;
                chatTools.add(new Tool("function",
                        new Tool.Function(name, string(tool, "description"), parameters, strict)));
            }
        }
        return chatTools.isEmpty() ? null : chatTools;
    }

    private static Object toolChoice(JsonNode choice) {
        if (choice == null || choice.isNull()) {
            return null;
        }
        if (choice.isString()) {
            return choice.stringValue();
        }
        if (choice instanceof ObjectNode o) {
            String type = string(o, "type");
            if ("function".equals(type) && string(o, "name") != null) {
                return Map.of("type", "function", "function", Map.of("name", string(o, "name")));
            }
            if ("allowed_tools".equals(type) && string(o, "mode") != null) {
                return string(o, "mode");
            }
            return "auto";
        }
        throw ApiError.invalidType("tool_choice", "expected a string or an object");
    }

    private ResponseFormat responseFormat(JsonNode text) {
        if (!(text instanceof ObjectNode t) || !(t.get("format") instanceof ObjectNode format)) {
            return null;
        }
        String type = string(format, "type");
        return switch (type == null ? "text" : type) {
            case "text" -> null;
            case "json_object" -> new ResponseFormat("json_object", null);
            case "json_schema" -> {
                Map<String, Object> schema = new LinkedHashMap<>();
                schema.put("name", string(format, "name") == null ? "response" : string(format, "name"));
                if (string(format, "description") != null) {
                    schema.put("description", string(format, "description"));
                }
                if (!(format.get("schema") instanceof ObjectNode s)) {
                    throw ApiError.invalidRequest("Missing required parameter: 'text.format.schema'.",
                            "text.format.schema");
                }
                schema.put("schema", json.treeToValue(s, Map.class));
                if (format.get("strict") instanceof JsonNode strict && strict.isBoolean()) {
                    schema.put("strict", strict.booleanValue());
                }
                yield new ResponseFormat("json_schema", schema);
            }
            default -> throw ApiError.invalidValue("Invalid value for 'text.format.type': '" + type
                    + "'. Supported values are: 'text', 'json_object' and 'json_schema'.", "text.format.type");
        };
    }

    static String string(ObjectNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isString()) {
            throw ApiError.invalidType(field, "expected a string");
        }
        return value.stringValue();
    }

    private static String required(ObjectNode node, String field, String param) {
        String value = string(node, field);
        if (value == null) {
            throw ApiError.invalidRequest("Missing required parameter: '" + param + "." + field + "'.",
                    param + "." + field);
        }
        return value;
    }

    private static String textOf(JsonNode part, String field, String param) {
        JsonNode text = part.get(field);
        if (text == null || !text.isString()) {
            throw ApiError.invalidRequest("Missing required parameter: '" + param + "." + field + "'.",
                    param + "." + field);
        }
        return text.stringValue();
    }

    private static Double number(ObjectNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isNumber()) {
            throw ApiError.invalidType(field, "expected a number");
        }
        return value.doubleValue();
    }

    private static Integer integer(ObjectNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isIntegralNumber() || !value.canConvertToInt()) {
            throw ApiError.invalidType(field, "expected an integer");
        }
        if (value.intValue() < 1) {
            throw ApiError.invalidValue("Invalid 'max_output_tokens': integer below minimum value. Expected a value "
                    + ">= 1, but got " + value.intValue() + " instead.", field);
        }
        return value.intValue();
    }
}
