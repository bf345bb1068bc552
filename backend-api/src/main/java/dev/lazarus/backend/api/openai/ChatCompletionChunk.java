package dev.lazarus.backend.api.openai;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;

/**
 * One {@code chat.completion.chunk} of a stream. Every backend call is a stream of these; a
 * non-streaming answer is aggregated from them ({@link ChatCompletionAggregator}). The last chunk
 * of a backend stream carries {@link #usage} with empty choices. Unknown fields (llama.cpp's
 * {@code timings}) are kept in {@link #extra}. A chunk read from an upstream server's stream may
 * carry its bytes as the server wrote them ({@link #raw}), so that the gateway can pass them on with
 * only the identity written over; any change of its fields drops them.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ChatCompletionChunk(
        String id,
        String object,
        long created,
        String model,
        @JsonProperty("system_fingerprint") String systemFingerprint,
        @JsonInclude(JsonInclude.Include.ALWAYS) List<Choice> choices,
        Usage usage,
        @JsonAnySetter @JsonAnyGetter Map<String, Object> extra,
        @JsonIgnore RawJson raw) {

    public static final String OBJECT = "chat.completion.chunk";

    /** A chunk made or changed here: no server's bytes to pass on. */
    public ChatCompletionChunk(String id, String object, long created, String model, String systemFingerprint,
            List<Choice> choices, Usage usage, Map<String, Object> extra) {
        this(id, object, created, model, systemFingerprint, choices, usage, extra, null);
    }

    public static ChatCompletionChunk of(String id, long created, String model, List<Choice> choices, Usage usage) {
        return new ChatCompletionChunk(id, OBJECT, created, model, null, choices, usage, null);
    }

    /** The chunk under another identity; its server's bytes stay (the identity is written over theirs). */
    public ChatCompletionChunk withIdentity(String newId, long newCreated, String newModel) {
        return new ChatCompletionChunk(newId, object, newCreated, newModel, systemFingerprint, choices, usage, extra, raw);
    }

    /** The same chunk without its server's bytes: for a chunk whose fields were changed in place. */
    public ChatCompletionChunk withoutRaw() {
        return raw == null ? this
                : new ChatCompletionChunk(id, object, created, model, systemFingerprint, choices, usage, extra, null);
    }

    public ChatCompletionChunk withChoices(List<Choice> newChoices) {
        return new ChatCompletionChunk(id, object, created, model, systemFingerprint, newChoices, usage, extra);
    }

    public ChatCompletionChunk withUsage(Usage newUsage) {
        return new ChatCompletionChunk(id, object, created, model, systemFingerprint, choices, newUsage, extra);
    }

    /** The text this chunk adds to choice 0, or "" for none. */
    public String contentDelta() {
        if (choices == null) {
            return "";
        }
        StringBuilder sb = new StringBuilder();
        for (Choice c : choices) {
            if (c.delta() != null && c.delta().content() != null) {
                sb.append(c.delta().content());
            }
        }
        return sb.toString();
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Choice(
            int index,
            Delta delta,
            Logprobs logprobs,
            @JsonProperty("finish_reason") @JsonInclude(JsonInclude.Include.ALWAYS) String finishReason) {}

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Delta(
            String role,
            String content,
            @JsonProperty("reasoning_content") String reasoningContent,
            @JsonProperty("tool_calls") List<ToolCall> toolCalls) {

        public static Delta content(String text) {
            return new Delta(null, text, null, null);
        }

        public static Delta role(String role) {
            return new Delta(role, "", null, null);
        }
    }
}
