package dev.lazarus.gateway.api;

import jakarta.validation.constraints.Min;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * What each API key of {@code lazarus.security.api-keys} may use, under {@code lazarus.key-limits.*}, as a LiteLLM
 * virtual key's limits bound one caller: a key past one is answered 429 with {@code Retry-After}, and other keys are
 * not affected. 0 turns a limit off.
 *
 * @param requestsPerMinute  requests one key may start in a minute (a fixed window that starts with the key's first
 *                           request)
 * @param concurrentRequests requests one key may have under way at once, streams included until their last byte
 */
@Validated
@ConfigurationProperties(prefix = "lazarus.key-limits")
public record KeyLimitsProperties(
        @DefaultValue("0") @Min(0) int requestsPerMinute,
        @DefaultValue("0") @Min(0) int concurrentRequests) {

    boolean any() {
        return requestsPerMinute > 0 || concurrentRequests > 0;
    }
}
