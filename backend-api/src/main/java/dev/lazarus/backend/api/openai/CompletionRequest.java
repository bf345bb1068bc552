package dev.lazarus.backend.api.openai;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.annotation.JsonFormat;
import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Legacy {@code POST /v1/completions} request. {@code prompt} is a string, an array of strings, or
 * token ids; it is kept as parsed ({@link #prompt}) and read through {@link #promptText()}. As with
 * chat, a request read from a client may carry its body as sent ({@link #raw}) for an HTTP backend to
 * send on; only {@link #withModel} and {@link #asUsageStream} keep it. Equality ignores it.
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
        @JsonAnySetter @JsonAnyGetter Map<String, Object> extra,
        @JsonIgnore RawRequest raw) {

    public CompletionRequest {
        extra = extra == null ? new LinkedHashMap<>() : extra;
    }

    /** A request made here: no client's bytes to send on. */
    public CompletionRequest(String model, Object prompt, String suffix, Integer maxTokens, Double temperature,
            Double topP, Integer n, Boolean stream, StreamOptions streamOptions, Integer logprobs, Boolean echo,
            List<String> stop, Double presencePenalty, Double frequencyPenalty, Integer bestOf,
            Map<String, Double> logitBias, Long seed, String user, Map<String, Object> extra) {
        this(model, prompt, suffix, maxTokens, temperature, topP, n, stream, streamOptions, logprobs, echo, stop,
                presencePenalty, frequencyPenalty, bestOf, logitBias, seed, user, extra, null);
    }

    public static CompletionRequest of(String model, String prompt, Integer maxTokens) {
        return new CompletionRequest(model, prompt, null, maxTokens, null, null, null, null, null, null, null, null,
                null, null, null, null, null, null, null);
    }

    /** The same request carrying the body it was read from. */
    public CompletionRequest withRaw(RawRequest body) {
        return new CompletionRequest(model, prompt, suffix, maxTokens, temperature, topP, n, stream, streamOptions,
                logprobs, echo, stop, presencePenalty, frequencyPenalty, bestOf, logitBias, seed, user, extra, body);
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

    /** The request for another model name: this one where the name is the same. */
    public CompletionRequest withModel(String newModel) {
        if (Objects.equals(newModel, model)) {
            return this;
        }
        return new CompletionRequest(newModel, prompt, suffix, maxTokens, temperature, topP, n, stream, streamOptions,
                logprobs, echo, stop, presencePenalty, frequencyPenalty, bestOf, logitBias, seed, user, extra,
                raw == null || newModel == null ? null : raw.withModel(newModel));
    }

    /** The same request asked as a stream that ends with a usage chunk: how backends are always called. */
    public CompletionRequest asUsageStream() {
        return new CompletionRequest(model, prompt, suffix, maxTokens, temperature, topP, n, true,
                new StreamOptions(true), logprobs, echo, stop, presencePenalty, frequencyPenalty, bestOf, logitBias,
                seed, user, new LinkedHashMap<>(extra), raw == null ? null : raw.asUsageStream(stream, streamOptions));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CompletionRequest r && Objects.equals(model, r.model) && Objects.equals(prompt, r.prompt)
                && Objects.equals(suffix, r.suffix) && Objects.equals(maxTokens, r.maxTokens)
                && Objects.equals(temperature, r.temperature) && Objects.equals(topP, r.topP)
                && Objects.equals(n, r.n) && Objects.equals(stream, r.stream)
                && Objects.equals(streamOptions, r.streamOptions) && Objects.equals(logprobs, r.logprobs)
                && Objects.equals(echo, r.echo) && Objects.equals(stop, r.stop)
                && Objects.equals(presencePenalty, r.presencePenalty)
                && Objects.equals(frequencyPenalty, r.frequencyPenalty) && Objects.equals(bestOf, r.bestOf)
                && Objects.equals(logitBias, r.logitBias) && Objects.equals(seed, r.seed)
                && Objects.equals(user, r.user) && Objects.equals(extra, r.extra);
    }

    @Override
    public int hashCode() {
        return Objects.hash(model, prompt, suffix, maxTokens, temperature, topP, n, stream, streamOptions, logprobs,
                echo, stop, presencePenalty, frequencyPenalty, bestOf, logitBias, seed, user, extra);
    }
}
