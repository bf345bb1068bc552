package dev.lazarus.backend.api.openai;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;

/**
 * A legacy {@code text_completion}: the whole response, or one chunk of a stream (same shape, as
 * OpenAI sends it). The final chunk of a backend stream carries {@link #usage} with empty choices.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Completion(
        String id,
        String object,
        long created,
        String model,
        @JsonProperty("system_fingerprint") String systemFingerprint,
        @JsonInclude(JsonInclude.Include.ALWAYS) List<Choice> choices,
        Usage usage,
        @JsonAnySetter @JsonAnyGetter Map<String, Object> extra) {

    public static final String OBJECT = "text_completion";

    public static Completion of(String id, long created, String model, List<Choice> choices, Usage usage) {
        return new Completion(id, OBJECT, created, model, null, choices, usage, null);
    }

    public Completion withIdentity(String newId, long newCreated, String newModel) {
        return new Completion(newId, object, newCreated, newModel, systemFingerprint, choices, usage, extra);
    }

    public Completion withChoices(List<Choice> newChoices) {
        return new Completion(id, object, created, model, systemFingerprint, newChoices, usage, extra);
    }

    public Completion withUsage(Usage newUsage) {
        return new Completion(id, object, created, model, systemFingerprint, choices, newUsage, extra);
    }

    /** The legacy logprobs object: parallel arrays per generated token. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record LegacyLogprobs(
            List<String> tokens,
            @JsonProperty("token_logprobs") List<Double> tokenLogprobs,
            @JsonProperty("top_logprobs") List<Map<String, Double>> topLogprobs,
            @JsonProperty("text_offset") List<Integer> textOffset) {}

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Choice(
            int index,
            String text,
            LegacyLogprobs logprobs,
            @JsonProperty("finish_reason") @JsonInclude(JsonInclude.Include.ALWAYS) String finishReason) {}
}
