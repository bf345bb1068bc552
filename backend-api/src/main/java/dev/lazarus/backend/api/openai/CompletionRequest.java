package dev.lazarus.backend.api.openai;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.annotation.JsonFormat;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Legacy {@code POST /v1/completions} request. {@code prompt} is a string, an array of strings, or
 * token ids; it is kept as parsed ({@link #prompt}) and read through {@link #promptText()}.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record CompletionRequest(
        String model,
        Object prompt,
        String suffix,
        @JsonProperty("max_tokens") Integer maxTokens,
        Double temperature,
        @JsonProperty("top_p") Double topP,
        Integer n,
        Boolean stream,
        @JsonProperty("stream_options") StreamOptions streamOptions,
        Integer logprobs,
        Boolean echo,
        @JsonFormat(with = JsonFormat.Feature.ACCEPT_SINGLE_VALUE_AS_ARRAY) List<String> stop,
        @JsonProperty("presence_penalty") Double presencePenalty,
        @JsonProperty("frequency_penalty") Double frequencyPenalty,
        @JsonProperty("best_of") Integer bestOf,
        @JsonProperty("logit_bias") Map<String, Double> logitBias,
        Long seed,
        String user,
        @JsonAnySetter @JsonAnyGetter Map<String, Object> extra) {

    public CompletionRequest {
        extra = extra == null ? new LinkedHashMap<>() : extra;
    }

    public static CompletionRequest of(String model, String prompt, Integer maxTokens) {
        return new CompletionRequest(model, prompt, null, maxTokens, null, null, null, null, null, null, null, null,
                null, null, null, null, null, null, null);
    }

    public boolean isStream() {
        return Boolean.TRUE.equals(stream);
    }

    public boolean wantsUsageInStream() {
        return streamOptions != null && streamOptions.wantsUsage();
    }

    /** The prompt as one string when it is a string or a one-element string array; null otherwise. */
    public String promptText() {
        if (prompt instanceof String s) {
            return s;
        }
        if (prompt instanceof List<?> list && list.size() == 1 && list.getFirst() instanceof String s) {
            return s;
        }
        return null;
    }

    public CompletionRequest withModel(String newModel) {
        return new CompletionRequest(newModel, prompt, suffix, maxTokens, temperature, topP, n, stream, streamOptions,
                logprobs, echo, stop, presencePenalty, frequencyPenalty, bestOf, logitBias, seed, user, extra);
    }

    public CompletionRequest asUsageStream() {
        return new CompletionRequest(model, prompt, suffix, maxTokens, temperature, topP, n, true,
                new StreamOptions(true), logprobs, echo, stop, presencePenalty, frequencyPenalty, bestOf, logitBias,
                seed, user, new LinkedHashMap<>(extra));
    }
}
