package dev.lazarus.backend.api.openai;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.annotation.JsonFormat;
import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * {@code POST /v1/chat/completions} request body. Fields the gateway does not know (llama.cpp's
 * {@code top_k}, {@code min_p}, {@code grammar}, {@code cache_prompt}, ...) are kept in
 * {@link #extra} and written back unchanged when the request is forwarded to an HTTP backend. A
 * request read from a client may carry its body as sent ({@link #raw}), which an HTTP backend sends
 * on instead of writing the request again; only {@link #withModel} and {@link #asUsageStream} keep it
 * (as the body with the model written over, or with fields appended), any other change drops it.
 * Equality ignores it.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ChatCompletionRequest(
        String model,
        List<ChatMessage> messages,
        Double temperature,
        @JsonProperty("top_p") Double topP,
        Integer n,
        Boolean stream,
        @JsonProperty("stream_options") StreamOptions streamOptions,
        @JsonFormat(with = JsonFormat.Feature.ACCEPT_SINGLE_VALUE_AS_ARRAY) List<String> stop,
        @JsonProperty("max_tokens") Integer maxTokens,
        @JsonProperty("max_completion_tokens") Integer maxCompletionTokens,
        @JsonProperty("presence_penalty") Double presencePenalty,
        @JsonProperty("frequency_penalty") Double frequencyPenalty,
        @JsonProperty("logit_bias") Map<String, Double> logitBias,
        Boolean logprobs,
        @JsonProperty("top_logprobs") Integer topLogprobs,
        Long seed,
        String user,
        List<Tool> tools,
        @JsonProperty("tool_choice") Object toolChoice,
        @JsonProperty("parallel_tool_calls") Boolean parallelToolCalls,
        @JsonProperty("response_format") ResponseFormat responseFormat,
        @JsonAnySetter @JsonAnyGetter Map<String, Object> extra,
        @JsonIgnore RawRequest raw) {

    public ChatCompletionRequest {
        extra = extra == null ? new LinkedHashMap<>() : extra;
    }

    /** A request made here: no client's bytes to send on. */
    public ChatCompletionRequest(String model, List<ChatMessage> messages, Double temperature, Double topP, Integer n,
            Boolean stream, StreamOptions streamOptions, List<String> stop, Integer maxTokens,
            Integer maxCompletionTokens, Double presencePenalty, Double frequencyPenalty,
            Map<String, Double> logitBias, Boolean logprobs, Integer topLogprobs, Long seed, String user,
            List<Tool> tools, Object toolChoice, Boolean parallelToolCalls, ResponseFormat responseFormat,
            Map<String, Object> extra) {
        this(model, messages, temperature, topP, n, stream, streamOptions, stop, maxTokens, maxCompletionTokens,
                presencePenalty, frequencyPenalty, logitBias, logprobs, topLogprobs, seed, user, tools, toolChoice,
                parallelToolCalls, responseFormat, extra, null);
    }

    /** The same request carrying the body it was read from. */
    public ChatCompletionRequest withRaw(RawRequest body) {
        return new ChatCompletionRequest(model, messages, temperature, topP, n, stream, streamOptions, stop, maxTokens,
                maxCompletionTokens, presencePenalty, frequencyPenalty, logitBias, logprobs, topLogprobs, seed, user,
                tools, toolChoice, parallelToolCalls, responseFormat, extra, body);
    }

    /** A minimal request, handy for tests and embedders. */
    public static ChatCompletionRequest of(String model, List<ChatMessage> messages) {
        return builder().model(model).messages(messages).build();
    }

    public boolean isStream() {
        return Boolean.TRUE.equals(stream);
    }

    /** {@code max_completion_tokens} wins over the deprecated {@code max_tokens}; null when neither is set. */
    public Integer effectiveMaxTokens() {
        return maxCompletionTokens != null ? maxCompletionTokens : maxTokens;
    }

    public boolean wantsUsageInStream() {
        return streamOptions != null && streamOptions.wantsUsage();
    }

    /** The request for another model name: this one where the name is the same. */
    public ChatCompletionRequest withModel(String newModel) {
        if (Objects.equals(newModel, model)) {
            return this;
        }
        ChatCompletionRequest renamed = toBuilder().model(newModel).build();
        return raw == null || newModel == null ? renamed : renamed.withRaw(raw.withModel(newModel));
    }

    public ChatCompletionRequest withMessages(List<ChatMessage> newMessages) {
        return toBuilder().messages(newMessages).build();
    }

    /** The same request asked as a stream that ends with a usage chunk: how backends are always called. */
    public ChatCompletionRequest asUsageStream() {
        ChatCompletionRequest streamed = toBuilder().stream(true).streamOptions(new StreamOptions(true)).build();
        RawRequest body = raw == null ? null : raw.asUsageStream(stream, streamOptions);
        return body == null ? streamed : streamed.withRaw(body);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ChatCompletionRequest r && Objects.equals(model, r.model)
                && Objects.equals(messages, r.messages) && Objects.equals(temperature, r.temperature)
                && Objects.equals(topP, r.topP) && Objects.equals(n, r.n) && Objects.equals(stream, r.stream)
                && Objects.equals(streamOptions, r.streamOptions) && Objects.equals(stop, r.stop)
                && Objects.equals(maxTokens, r.maxTokens) && Objects.equals(maxCompletionTokens, r.maxCompletionTokens)
                && Objects.equals(presencePenalty, r.presencePenalty)
                && Objects.equals(frequencyPenalty, r.frequencyPenalty) && Objects.equals(logitBias, r.logitBias)
                && Objects.equals(logprobs, r.logprobs) && Objects.equals(topLogprobs, r.topLogprobs)
                && Objects.equals(seed, r.seed) && Objects.equals(user, r.user) && Objects.equals(tools, r.tools)
                && Objects.equals(toolChoice, r.toolChoice) && Objects.equals(parallelToolCalls, r.parallelToolCalls)
                && Objects.equals(responseFormat, r.responseFormat) && Objects.equals(extra, r.extra);
    }

    @Override
    public int hashCode() {
        return Objects.hash(model, messages, temperature, topP, n, stream, streamOptions, stop, maxTokens,
                maxCompletionTokens, presencePenalty, frequencyPenalty, logitBias, logprobs, topLogprobs, seed, user,
                tools, toolChoice, parallelToolCalls, responseFormat, extra);
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.model = model;
        b.messages = messages;
        b.temperature = temperature;
        b.topP = topP;
        b.n = n;
        b.stream = stream;
        b.streamOptions = streamOptions;
        b.stop = stop;
        b.maxTokens = maxTokens;
        b.maxCompletionTokens = maxCompletionTokens;
        b.presencePenalty = presencePenalty;
        b.frequencyPenalty = frequencyPenalty;
        b.logitBias = logitBias;
        b.logprobs = logprobs;
        b.topLogprobs = topLogprobs;
        b.seed = seed;
        b.user = user;
        b.tools = tools;
        b.toolChoice = toolChoice;
        b.parallelToolCalls = parallelToolCalls;
        b.responseFormat = responseFormat;
        b.extra = new LinkedHashMap<>(extra);
        return b;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Mutable builder; {@link #build()} makes an immutable-by-convention request. */
    public static final class Builder {
        private String model;
        private List<ChatMessage> messages = new ArrayList<>();
        private Double temperature;
        private Double topP;
        private Integer n;
        private Boolean stream;
        private StreamOptions streamOptions;
        private List<String> stop;
        private Integer maxTokens;
        private Integer maxCompletionTokens;
        private Double presencePenalty;
        private Double frequencyPenalty;
        private Map<String, Double> logitBias;
        private Boolean logprobs;
        private Integer topLogprobs;
        private Long seed;
        private String user;
        private List<Tool> tools;
        private Object toolChoice;
        private Boolean parallelToolCalls;
        private ResponseFormat responseFormat;
        private Map<String, Object> extra = new LinkedHashMap<>();

        public Builder model(String v) { model = v; return this; }
        public Builder messages(List<ChatMessage> v) { messages = v; return this; }
        public Builder temperature(Double v) { temperature = v; return this; }
        public Builder topP(Double v) { topP = v; return this; }
        public Builder n(Integer v) { n = v; return this; }
        public Builder stream(Boolean v) { stream = v; return this; }
        public Builder streamOptions(StreamOptions v) { streamOptions = v; return this; }
        public Builder stop(List<String> v) { stop = v; return this; }
        public Builder maxTokens(Integer v) { maxTokens = v; return this; }
        public Builder maxCompletionTokens(Integer v) { maxCompletionTokens = v; return this; }
        public Builder presencePenalty(Double v) { presencePenalty = v; return this; }
        public Builder frequencyPenalty(Double v) { frequencyPenalty = v; return this; }
        public Builder logitBias(Map<String, Double> v) { logitBias = v; return this; }
        public Builder logprobs(Boolean v) { logprobs = v; return this; }
        public Builder topLogprobs(Integer v) { topLogprobs = v; return this; }
        public Builder seed(Long v) { seed = v; return this; }
        public Builder user(String v) { user = v; return this; }
        public Builder tools(List<Tool> v) { tools = v; return this; }
        public Builder toolChoice(Object v) { toolChoice = v; return this; }
        public Builder parallelToolCalls(Boolean v) { parallelToolCalls = v; return this; }
        public Builder responseFormat(ResponseFormat v) { responseFormat = v; return this; }
        public Builder extra(String key, Object value) { extra.put(key, value); return this; }

        public ChatCompletionRequest build() {
            return new ChatCompletionRequest(model, messages, temperature, topP, n, stream, streamOptions, stop,
                    maxTokens, maxCompletionTokens, presencePenalty, frequencyPenalty, logitBias, logprobs,
                    topLogprobs, seed, user, tools, toolChoice, parallelToolCalls, responseFormat, extra);
        }
    }
}
