package dev.lazarus.gateway.policy.gate;

import com.fasterxml.jackson.annotation.JsonProperty;
/**
 * One benchmark call.
 *
 * @param run              1-based run number
 * @param ok               whether it completed
 * @param tokensPerSecond  generation speed: completion tokens after the first over the time
 *                         from the first to the last token (all tokens over the whole call when the
 *                         backend sends them in one piece); NaN when it failed
 * @param ttftMillis       time to the first content token; NaN when it failed
 * @param completionTokens tokens generated (the backend's usage, else content chunks)
 * @param error            why it failed, or null
 */
public record RunResult(int run, boolean ok, @JsonProperty("tokens_per_second") double tokensPerSecond,
                        @JsonProperty("ttft_ms") double ttftMillis,
                        @JsonProperty("completion_tokens") int completionTokens,
                        String error) {

    public static RunResult failed(int run, String error) {
        return new RunResult(run, false, Double.NaN, Double.NaN, 0, error);
    }
}
