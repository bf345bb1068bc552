package dev.lazarus.backend.api.openai;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;

/** A non-streaming {@code chat.completion} response. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ChatCompletion(
        String id,
        String object,
        long created,
        String model,
        @JsonProperty("system_fingerprint") String systemFingerprint,
        List<Choice> choices,
        Usage usage,
        @JsonAnySetter @JsonAnyGetter Map<String, Object> extra) {

    public static final String OBJECT = "chat.completion";

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Choice(
            int index,
            ChatMessage message,
            Logprobs logprobs,
            @JsonProperty("finish_reason") @JsonInclude(JsonInclude.Include.ALWAYS) String finishReason) {}
}
