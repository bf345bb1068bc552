package dev.lazarus.backend.api.openai;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * Chat {@code logprobs}: one entry per generated token, each with its most likely alternatives; the
 * token's {@code id} where the server gives it (llama-server does).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Logprobs(List<TokenLogprob> content) {

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record TokenLogprob(
            Integer id,
            String token,
            double logprob,
            List<Integer> bytes,
            @JsonProperty("top_logprobs") List<TopLogprob> topLogprobs) {

        /** An entry without the token's id (which llama-server adds; OpenAI has none). */
        public TokenLogprob(String token, double logprob, List<Integer> bytes, List<TopLogprob> topLogprobs) {
            this(null, token, logprob, bytes, topLogprobs);
        }
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record TopLogprob(String token, double logprob, List<Integer> bytes) {}
}
