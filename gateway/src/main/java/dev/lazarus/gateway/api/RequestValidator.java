package dev.lazarus.gateway.api;

import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.CompletionRequest;
import dev.lazarus.backend.api.openai.StreamOptions;
import dev.lazarus.backend.api.openai.Tool;
import dev.lazarus.backend.api.openai.ToolCall;
import java.util.List;
import java.util.Set;

/**
 * The checks OpenAI applies before it routes a request, with its parameter names and ranges. Only
 * fields the gateway knows are checked; unknown ones pass through to the backend untouched.
 */
public final class RequestValidator {

    private static final Set<String> ROLES = Set.of("system", "developer", "user", "assistant", "tool", "function");

    public void validate(ChatCompletionRequest r) {
        requireModel(r.model());
        List<ChatMessage> messages = r.messages();
        if (messages == null) {
            throw ApiError.invalidRequest("Missing required parameter: 'messages'.", "messages");
        }
        if (messages.isEmpty()) {
            throw ApiError.invalidValue("'messages' must contain at least one message.", "messages");
        }
        for (int i = 0; i < messages.size(); i++) {
            validateMessage(messages.get(i), "messages[" + i + "]");
        }
        tools(r.tools());
        sampling(r.stop(), r.temperature(), r.topP(), r.presencePenalty(), r.frequencyPenalty(), r.maxTokens());
        atLeastOne(r.maxCompletionTokens(), "max_completion_tokens");
        singleChoice(r.n(), "n");
        if (r.topLogprobs() != null) {
            range(r.topLogprobs().doubleValue(), 0, 20, "top_logprobs");
            if (!Boolean.TRUE.equals(r.logprobs())) {
                throw ApiError.invalidValue("'top_logprobs' requires 'logprobs' to be true.", "top_logprobs");
            }
        }
        streamOptions(r.streamOptions(), r.isStream());
    }

    public void validate(CompletionRequest r) {
        requireModel(r.model());
        validatePrompt(r.prompt());
        sampling(r.stop(), r.temperature(), r.topP(), r.presencePenalty(), r.frequencyPenalty(), r.maxTokens());
        singleChoice(r.n(), "n");
        singleChoice(r.bestOf(), "best_of");
        if (r.logprobs() != null) {
            range(r.logprobs().doubleValue(), 0, 5, "logprobs");
        }
        streamOptions(r.streamOptions(), r.isStream());
    }

    /** The sampling fields chat and legacy completions share, with OpenAI's ranges. */
    private static void sampling(List<String> stop, Double temperature, Double topP, Double presencePenalty,
            Double frequencyPenalty, Integer maxTokens) {
        noNullEntries(stop, "stop");
        range(temperature, 0, 2, "temperature");
        range(topP, 0, 1, "top_p");
        range(presencePenalty, -2, 2, "presence_penalty");
        range(frequencyPenalty, -2, 2, "frequency_penalty");
        atLeastOne(maxTokens, "max_tokens");
    }

    private static void requireModel(String model) {
        if (model == null || model.isBlank()) {
            throw ApiError.invalidRequest("Missing required parameter: 'model'.", "model");
        }
    }

    private static void validateMessage(ChatMessage message, String param) {
        requireObject(message, param);
        if (message.role() == null) {
            throw ApiError.invalidRequest("Missing required parameter: '" + param + ".role'.", param + ".role");
        }
        if (!ROLES.contains(message.role())) {
            throw ApiError.invalidValue("Invalid value: '" + message.role() + "'. Supported values are: "
                    + "'system', 'developer', 'user', 'assistant', 'tool' and 'function'.", param + ".role");
        }
        boolean contentOptional = "assistant".equals(message.role());
        if (message.content() == null && !contentOptional) {
            throw ApiError.invalidRequest("Missing required parameter: '" + param + ".content'.", param + ".content");
        }
        if ("tool".equals(message.role()) && message.toolCallId() == null) {
            throw ApiError.invalidRequest("Missing required parameter: '" + param + ".tool_call_id'.",
                    param + ".tool_call_id");
        }
        List<ToolCall> calls = message.toolCalls();
        for (int i = 0; calls != null && i < calls.size(); i++) {
            String call = param + ".tool_calls[" + i + "]";
            ToolCall.FunctionCall function = required(requireObject(calls.get(i), call).function(), call + ".function");
            required(function.name(), call + ".function.name");
        }
    }

    /**
     * Tools and tool calls are rendered into the prompt by backends that template locally: a null
     * entry or a nameless function would fail there as an internal error, and count against the
     * backend's breaker, for what is the client's mistake.
     */
    private static void tools(List<Tool> tools) {
        for (int i = 0; tools != null && i < tools.size(); i++) {
            String param = "tools[" + i + "]";
            Tool.Function function = required(requireObject(tools.get(i), param).function(), param + ".function");
            required(function.name(), param + ".function.name");
        }
    }

    private static <T> T required(T value, String param) {
        if (value == null) {
            throw ApiError.invalidRequest("Missing required parameter: '" + param + "'.", param);
        }
        return value;
    }

    private static <T> T requireObject(T value, String param) {
        if (value == null) {
            throw ApiError.invalidType(param, "expected an object, but got null instead");
        }
        return value;
    }

    private static void noNullEntries(List<?> values, String param) {
        for (int i = 0; values != null && i < values.size(); i++) {
            if (values.get(i) == null) {
                throw ApiError.invalidType(param + "[" + i + "]", "expected a string, but got null instead");
            }
        }
    }

    /** A string, an array of strings, an array of token ids, or an array of such arrays. */
    private static void validatePrompt(Object prompt) {
        if (prompt == null) {
            throw ApiError.invalidRequest("Missing required parameter: 'prompt'.", "prompt");
        }
        boolean valid = prompt instanceof String
                || prompt instanceof List<?> list && !list.isEmpty() && (
                        list.stream().allMatch(String.class::isInstance)
                        || list.stream().allMatch(Integer.class::isInstance)
                        || list.stream().allMatch(item -> item instanceof List<?> ids
                                && ids.stream().allMatch(Integer.class::isInstance)));
        if (!valid) {
            throw ApiError.invalidType("prompt", "expected a string, an array of strings, "
                    + "an array of token ids or an array of token id arrays");
        }
    }

    private static void range(Double value, double min, double max, String param) {
        if (value != null && !(value >= min && value <= max)) {
            throw ApiError.invalidValue("Invalid '" + param + "': " + value + " is not between " + format(min)
                    + " and " + format(max) + ".", param);
        }
    }

    private static void atLeastOne(Integer value, String param) {
        if (value != null && value < 1) {
            throw ApiError.invalidValue("Invalid '" + param + "': must be at least 1, got " + value + ".", param);
        }
    }

    /** The gateway relays one backend stream per request: more than one choice is not offered. */
    private static void singleChoice(Integer value, String param) {
        if (value != null && value != 1) {
            throw ApiError.invalidValue("Invalid '" + param + "': only 1 is supported by this gateway, got "
                    + value + ".", param);
        }
    }

    private static void streamOptions(StreamOptions options, boolean stream) {
        if (options != null && !stream) {
            throw ApiError.invalidRequest("The 'stream_options' parameter is only allowed when 'stream' is enabled.",
                    "stream_options");
        }
    }

    private static String format(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }
}
