package dev.lazarus.gateway.api.anthropic;

import dev.lazarus.backend.api.ProtocolEvent;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import java.util.LinkedHashMap;
import java.util.Map;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * The gateway's generation cap on Messages requests ({@code lazarus.messages.max-tokens}): the request lowered to
 * it, and a natively served answer that the cap ended told as the end of the turn, as the translated one is
 * ({@link MessageAnswerTranslator#stopReason}).
 */
final class MessagesCap {

    private static final TypeReference<Map<String, Object>> OBJECT = new TypeReference<>() {};

    private final int maxTokens;
    private final JsonMapper json;

    MessagesCap(MessagesProperties properties, JsonMapper json) {
        this.maxTokens = properties.maxTokens();
        this.json = json;
    }

    /** Whether the cap lowers this request's {@code max_tokens}. */
    boolean lowers(ChatCompletionRequest chat) {
        return maxTokens > 0 && chat.maxTokens() != null && chat.maxTokens() > maxTokens;
    }

    ChatCompletionRequest lower(ChatCompletionRequest chat) {
        return chat.toBuilder().maxTokens(maxTokens).build();
    }

    /** The body a native backend gets, with the cap as its {@code max_tokens}. */
    Map<String, Object> lower(Map<String, Object> body) {
        Map<String, Object> lowered = new LinkedHashMap<>(body);
        lowered.put("max_tokens", maxTokens);
        return lowered;
    }

    /** A native whole answer's {@code max_tokens} stop as {@code end_turn}. */
    Map<String, Object> endTurn(Map<String, Object> message) {
        if ("max_tokens".equals(message.get("stop_reason"))) {
            message.put("stop_reason", "end_turn");
        }
        return message;
    }

    /**
     * A native {@code message_delta}'s stop reason as the translated one tells it: a {@code max_tokens} stop of the
     * cap ({@code capped}) as {@code end_turn}, a stop on a stop sequence as {@code stop_sequence}
     * ({@link MessageAnswerTranslator#stopSequenceReason}); other events as they are.
     */
    @SuppressWarnings("unchecked")
    ProtocolEvent stopReason(ProtocolEvent event, boolean capped) {
        if (!event.name().equals("message_delta")) {
            return event;
        }
        Map<String, Object> data = json.readValue(event.data(), OBJECT);
        if (!(data.get("delta") instanceof Map<?, ?> read)) {
            return event;
        }
        Map<String, Object> delta = (Map<String, Object>) read;
        boolean changed = MessageAnswerTranslator.stopSequenceReason(delta);
        if (capped && "max_tokens".equals(delta.get("stop_reason"))) {
            delta.put("stop_reason", "end_turn");
            changed = true;
        }
        return changed ? new ProtocolEvent(event.name(), json.writeValueAsBytes(data)) : event;
    }
}
