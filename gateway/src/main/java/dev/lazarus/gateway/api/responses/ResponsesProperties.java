package dev.lazarus.gateway.api.responses;

import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * The Responses API's settings, under {@code lazarus.responses.*}: the store of served responses ({@code store:
 * true}, the default) and a generation cap.
 *
 * @param storeTtl        how long a stored response can be retrieved or continued ({@code previous_response_id})
 * @param storeMaxEntries how many responses are kept at most, the oldest dropped first; 0 keeps none
 * @param maxOutputTokens the generation cap of a request that sets no {@code max_output_tokens} (agents such as
 *                        Codex set none); 0: none. An answer it ends is complete, as a server's own cap ends it
 * @param keepAliveInterval how long a stream waits for the backend's first token before the gateway opens the
 *                        response ({@code response.created}, {@code response.in_progress}), and then between the
 *                        SSE comments that keep it alive until the answer comes: clients give up on a response
 *                        that has not begun (a long prompt on a CPU takes minutes). 0: never, the stream begins
 *                        with the answer
 */
@Validated
@ConfigurationProperties(prefix = "lazarus.responses")
public record ResponsesProperties(
        @DefaultValue("1h") @NotNull Duration storeTtl,
        @DefaultValue("1000") @Min(0) int storeMaxEntries,
        @DefaultValue("0") @Min(0) int maxOutputTokens,
        @DefaultValue("10s") @NotNull Duration keepAliveInterval) {

    public ResponsesProperties {
        if (keepAliveInterval.isNegative()) {
            throw new IllegalArgumentException("lazarus.responses.keep-alive-interval must not be negative");
        }
    }
}
