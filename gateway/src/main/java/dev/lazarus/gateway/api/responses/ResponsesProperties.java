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
 */
@Validated
@ConfigurationProperties(prefix = "lazarus.responses")
public record ResponsesProperties(
        @DefaultValue("1h") @NotNull Duration storeTtl,
        @DefaultValue("1000") @Min(0) int storeMaxEntries,
        @DefaultValue("0") @Min(0) int maxOutputTokens) {}
