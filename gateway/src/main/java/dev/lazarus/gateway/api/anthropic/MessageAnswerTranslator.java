package dev.lazarus.gateway.api.anthropic;

import dev.lazarus.backend.api.openai.ChatCompletion;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.ToolCall;
import dev.lazarus.backend.api.openai.Usage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * A whole chat answer as an Anthropic {@code message}: reasoning as a {@code thinking} block, then the text, then a
 * {@code tool_use} block per tool call; the finish reason as a {@code stop_reason}; the usage in Anthropic's names.
 * The pieces the stream translator shares (stop reasons, usage, ids, tool input) live here too.
 */
public final class MessageAnswerTranslator {

    private static final char[] ALPHABET =
            "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".toCharArray();

    private final JsonMapper json;

    public MessageAnswerTranslator(JsonMapper json) {
        this.json = json;
    }

    public Map<String, Object> toMessage(String id, String model, ChatCompletion answer) {
        return toMessage(id, model, answer, false, null);
    }

    /**
     * @param capped       whether the gateway's cap lowered the client's {@code max_tokens} ({@link MessagesProperties})
     * @param stopSequence the request's stop sequence that ended the answer, where its server told it, else null
     */
    public Map<String, Object> toMessage(String id, String model, ChatCompletion answer, boolean capped,
            String stopSequence) {
        ChatCompletion.Choice choice = answer.choices() == null || answer.choices().isEmpty() ? null
                : answer.choices().getFirst();
        ChatMessage message = choice == null ? null : choice.message();
        List<Map<String, Object>> content = new ArrayList<>();
        if (message != null && message.reasoningContent() != null && !message.reasoningContent().isEmpty()) {
            content.add(thinkingBlock(message.reasoningContent()));
        }
        if (message != null && !message.text().isEmpty()) {
            Map<String, Object> text = new LinkedHashMap<>();
            text.put("type", "text");
            text.put("text", message.text());
            content.add(text);
        }
        boolean calls = message != null && message.toolCalls() != null && !message.toolCalls().isEmpty();
        if (calls) {
            for (ToolCall call : message.toolCalls()) {
                String name = call.function() == null ? null : call.function().name();
                Map<String, Object> block = toolUseStart(call.id(), name);
                block.put("input", input(call.function() == null ? null : call.function().arguments()));
                content.add(block);
            }
        }
        Map<String, Object> out = envelope(id, model, content);
        String finishReason = choice == null ? null : choice.finishReason();
        String stop = stoppedBy(finishReason, calls, stopSequence);
        out.put("stop_reason", stop != null ? "stop_sequence" : stopReason(finishReason, calls, capped));
        out.put("stop_sequence", stop);
        out.put("usage", usage(answer.usage()));
        return out;
    }

    /** The {@code message} object without its stop reason and usage: what {@code message_start} carries too. */
    static Map<String, Object> envelope(String id, String model, List<Map<String, Object>> content) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("id", id);
        out.put("type", "message");
        out.put("role", "assistant");
        out.put("model", model);
        out.put("content", content);
        return out;
    }

    /** A new message id: {@code msg_} and 24 random characters, as Anthropic's look. */
    public static String messageId() {
        return "msg_" + random(24);
    }

    static String toolUseId() {
        return "toolu_" + random(24);
    }

    private static String random(int length) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        StringBuilder id = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            id.append(ALPHABET[random.nextInt(ALPHABET.length)]);
        }
        return id.toString();
    }

    /**
     * Anthropic's stop reason for a chat finish reason: a length cut is {@code max_tokens}, tool calls are
     * {@code tool_use} (whatever the server said: some say {@code stop} after calls), anything else the end of a turn.
     * A length cut by the gateway's cap, below the client's {@code max_tokens}, ends the turn as the server's whole
     * answer: the client's limit was not reached (and agents fail a turn that reports it).
     */
    static String stopReason(String finishReason, boolean toolCalls, boolean capped) {
        if ("length".equals(finishReason) && !capped) {
            return "max_tokens";
        }
        return toolCalls || "tool_calls".equals(finishReason) ? "tool_use" : "end_turn";
    }

    /**
     * The chat chunk field in which a server names the stop string that ended its answer (llama-server's name for it
     * in its own completions; kt-native sets it on its finish chunk). llama-server's chat completions do not tell it.
     */
    static final String STOPPING_WORD = "stopping_word";

    /** The stop string a chunk says ended the answer, or null. */
    static String stoppingWord(ChatCompletionChunk chunk) {
        return chunk.extra() != null && chunk.extra().get(STOPPING_WORD) instanceof String word && !word.isEmpty()
                ? word : null;
    }

    /** The stop sequence that ended a chat answer, where it ended on one (not on tool calls), else null. */
    static String stoppedBy(String finishReason, boolean toolCalls, String stopSequence) {
        return stopSequence != null && "stop".equals(finishReason) && !toolCalls ? stopSequence : null;
    }

    /**
     * A native answer's or {@code message_delta}'s stop as Anthropic tells it: a server that names the stop sequence
     * that ended the answer but calls it {@code end_turn} (llama-server b11669) ended on {@code stop_sequence}.
     *
     * @param stop the object holding {@code stop_reason} and {@code stop_sequence} (the message, or the delta)
     * @return whether it was changed
     */
    static boolean stopSequenceReason(Map<String, Object> stop) {
        if (stop.get("stop_sequence") instanceof String sequence && !sequence.isEmpty()
                && "end_turn".equals(stop.get("stop_reason"))) {
            stop.put("stop_reason", "stop_sequence");
            return true;
        }
        return false;
    }

    /**
     * Anthropic's usage: {@code input_tokens} counts the prompt tokens not read from the cache, which are
     * {@code cache_read_input_tokens}, as Anthropic splits them.
     */
    static Map<String, Object> usage(Usage usage) {
        Map<String, Object> out = new LinkedHashMap<>();
        int prompt = usage == null ? 0 : usage.promptTokens();
        int cached = cached(usage);
        out.put("input_tokens", prompt - cached);
        out.put("cache_read_input_tokens", cached);
        out.put("output_tokens", usage == null ? 0 : usage.completionTokens());
        return out;
    }

    private static int cached(Usage usage) {
        if (usage == null || usage.promptTokensDetails() == null) {
            return 0;
        }
        return usage.promptTokensDetails().get("cached_tokens") instanceof Number n
                ? Math.min(n.intValue(), usage.promptTokens()) : 0;
    }

    static Map<String, Object> thinkingBlock(String thinking) {
        Map<String, Object> block = new LinkedHashMap<>();
        block.put("type", "thinking");
        block.put("thinking", thinking);
        // Anthropic signs its own models' thinking; a local model's has no signature to give.
        block.put("signature", "");
        return block;
    }

    static Map<String, Object> toolUseStart(String id, String name) {
        Map<String, Object> block = new LinkedHashMap<>();
        block.put("type", "tool_use");
        block.put("id", id == null || id.isEmpty() ? toolUseId() : id);
        block.put("name", name == null ? "" : name);
        block.put("input", Map.of());
        return block;
    }

    /** A tool call's arguments as the input object; arguments that are no JSON object are kept as a string. */
    private Object input(String arguments) {
        if (arguments == null || arguments.isBlank()) {
            return Map.of();
        }
        try {
            Object value = json.readValue(arguments, Object.class);
            return value instanceof Map<?, ?> ? value : Map.of("arguments", arguments);
        } catch (JacksonException e) {
            return Map.of("arguments", arguments);
        }
    }
}
