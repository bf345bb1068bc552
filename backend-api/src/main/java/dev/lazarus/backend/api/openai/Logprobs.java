package dev.lazarus.backend.api.openai;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** Chat {@code logprobs}: one entry per generated token, each with its most likely alternatives. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Logprobs(List<TokenLogprob> content) {

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record TokenLogprob(
            String token,
            double logprob,
            List<Integer> bytes,
            @JsonProperty("top_logprobs") List<TopLogprob> topLogprobs) {}

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record TopLogprob(String token, double logprob, List<Integer> bytes) {}
}
