package dev.lazarus.backend.api.openai;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;

/**
 * A chat message, as sent in a request and as returned in a non-streaming response. Roles:
 * {@code system}, {@code developer}, {@code user}, {@code assistant}, {@code tool}.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ChatMessage(
        String role,
        MessageContent content,
        String name,
        @JsonProperty("tool_calls") List<ToolCall> toolCalls,
        @JsonProperty("tool_call_id") String toolCallId,
        @JsonProperty("reasoning_content") String reasoningContent,
        @JsonAnySetter @JsonAnyGetter Map<String, Object> extra) {

    public static ChatMessage of(String role, String text) {
        return new ChatMessage(role, text == null ? null : MessageContent.ofText(text), null, null, null, null, null);
    }

    public static ChatMessage system(String text) {
        return of("system", text);
    }

    public static ChatMessage user(String text) {
        return of("user", text);
    }

    public static ChatMessage assistant(String text) {
        return of("assistant", text);
    }

    /** The content as plain text ("" when absent). */
    public String text() {
        return content == null ? "" : content.asText();
    }
}
