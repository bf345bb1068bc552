package dev.lazarus.gateway.api;

import jakarta.validation.Valid;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import java.util.List;
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
 * @param tokensPerMinute    usage tokens (prompt and completion, as the backends report them) one key's answers may
 *                           count in a minute; a key at or over it is refused until its window renews
 * @param concurrentRequests requests one key may have under way at once, streams included until their last byte
 * @param keys               limits of their own for some keys; what one leaves unset is the value above
 */
@Validated
@ConfigurationProperties(prefix = "lazarus.key-limits")
public record KeyLimitsProperties(
        @DefaultValue("0") @Min(0) int requestsPerMinute,
        @DefaultValue("0") @Min(0) long tokensPerMinute,
        @DefaultValue("0") @Min(0) int concurrentRequests,
        @DefaultValue List<@Valid Key> keys) {

    /**
     * One key's own limits.
     *
     * @param name               how logs and error messages name the key (never the key itself)
     * @param key                the key, one of {@code lazarus.security.api-keys} (a {@code ${VARIABLE}} as there)
     * @param requestsPerMinute  this key's requests per minute; unset: the default
     * @param tokensPerMinute    this key's tokens per minute; unset: the default
     * @param concurrentRequests this key's requests under way; unset: the default
     */
    public record Key(
            @NotBlank String name,
            @NotBlank String key,
            @Min(0) Integer requestsPerMinute,
            @Min(0) Long tokensPerMinute,
            @Min(0) Integer concurrentRequests) {

        /** The key never reaches a log line or a config dump. */
        @Override
        public String toString() {
            return "Key[name=" + name + "]";
        }
    }

    /** The limits that apply to one key: its own where set, else the defaults. */
    record Limits(int requestsPerMinute, long tokensPerMinute, int concurrentRequests) {
        boolean any() {
            return requestsPerMinute > 0 || tokensPerMinute > 0 || concurrentRequests > 0;
        }
    }

    Limits defaults() {
        return new Limits(requestsPerMinute, tokensPerMinute, concurrentRequests);
    }

    Limits of(Key key) {
        return new Limits(
                key.requestsPerMinute() != null ? key.requestsPerMinute() : requestsPerMinute,
                key.tokensPerMinute() != null ? key.tokensPerMinute() : tokensPerMinute,
                key.concurrentRequests() != null ? key.concurrentRequests() : concurrentRequests);
    }

    /** Whether any key has any limit. */
    boolean any() {
        return defaults().any() || keys.stream().anyMatch(k -> of(k).any());
    }
}
