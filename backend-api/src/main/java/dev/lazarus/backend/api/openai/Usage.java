package dev.lazarus.backend.api.openai;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Map;

/**
 * Token counts of one completion. The details an upstream adds ({@code prompt_tokens_details.cached_tokens},
 * {@code completion_tokens_details.reasoning_tokens}, and whatever else it puts there) are kept as sent.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Usage(
        @JsonProperty("prompt_tokens") int promptTokens,
        @JsonProperty("completion_tokens") int completionTokens,
        @JsonProperty("total_tokens") int totalTokens,
        @JsonProperty("prompt_tokens_details") Map<String, Object> promptTokensDetails,
        @JsonProperty("completion_tokens_details") Map<String, Object> completionTokensDetails) {

    public Usage(int promptTokens, int completionTokens, int totalTokens) {
        this(promptTokens, completionTokens, totalTokens, null, null);
    }

    public static Usage of(int promptTokens, int completionTokens) {
        return new Usage(promptTokens, completionTokens, promptTokens + completionTokens);
    }
}
