package dev.lazarus.gateway.resilience;

import dev.lazarus.backend.api.BackendErrorKind;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.ConstructorBinding;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * {@code lazarus.resilience.attempt.*}: how long one backend call may take to its first token before
 * the request moves on, and how often a call that failed before its first token is tried again on
 * the same backend. Defaults for every backend, overrides per backend id. {@code answer-timeout} is
 * the first-token limit's counterpart for a non-streamed answer (which comes whole, at the end).
 *
 * The keys directly under {@code attempt} are every backend's {@link Policy}; {@code backends}
 * holds, per backend id, the keys that differ.
 */
@Validated
@ConfigurationProperties(prefix = "lazarus.resilience.attempt")
public record AttemptProperties(
        @DefaultValue("30s") @NotNull Duration firstTokenTimeout,
        @DefaultValue("1") @Min(0) int retries,
        @DefaultValue("250ms") @NotNull Duration retryBackoff,
        @DefaultValue("5s") @NotNull Duration maxRetryAfter,
        @DefaultValue({"OVERLOADED", "UPSTREAM", "INTERNAL"}) @NotNull Set<BackendErrorKind> retryOn,
        @DefaultValue Map<String, @Valid Override> backends,
        @DefaultValue("5m") @NotNull Duration answerTimeout) {

    @ConstructorBinding
    public AttemptProperties {
        backends = backends == null ? Map.of() : Map.copyOf(backends);
        positive("first-token-timeout", firstTokenTimeout);
        positive("answer-timeout", answerTimeout);
        notNegative("retry-backoff", retryBackoff);
        notNegative("max-retry-after", maxRetryAfter);
        backends.forEach((id, o) -> {
            positive("backends." + id + ".first-token-timeout", o.firstTokenTimeout());
            notNegative("backends." + id + ".retry-backoff", o.retryBackoff());
            notNegative("backends." + id + ".max-retry-after", o.maxRetryAfter());
        });
    }

    /** With the default {@code answer-timeout}. */
    public AttemptProperties(Duration firstTokenTimeout, int retries, Duration retryBackoff, Duration maxRetryAfter,
            Set<BackendErrorKind> retryOn, Map<String, Override> backends) {
        this(firstTokenTimeout, retries, retryBackoff, maxRetryAfter, retryOn, backends, Duration.ofMinutes(5));
    }

    private static void positive(String key, Duration d) {
        if (d != null && (d.isZero() || d.isNegative())) {
            throw new IllegalArgumentException("lazarus.resilience.attempt." + key + " must be positive, got " + d);
        }
    }

    private static void notNegative(String key, Duration d) {
        if (d != null && d.isNegative()) {
            throw new IllegalArgumentException("lazarus.resilience.attempt." + key + " must not be negative, got " + d);
        }
    }

    /**
     * One backend's policy.
     *
     * @param firstTokenTimeout no first chunk within this: TIMEOUT, and the request goes to the next backend
     * @param retries           how many more times a call that failed before its first token is made
     *                          on the same backend (0: never)
     * @param retryBackoff      the wait before the first retry, doubled for each further one; also the
     *                          wait after a 429 that names no {@code Retry-After}
     * @param maxRetryAfter     the longest {@code Retry-After} waited for; a longer one moves on at once
     * @param retryOn           the error kinds worth another try on the same backend
     */
    public record Policy(Duration firstTokenTimeout, int retries, Duration retryBackoff, Duration maxRetryAfter,
            Set<BackendErrorKind> retryOn) {

        public Policy {
            retryOn = Set.copyOf(retryOn);
        }
    }

    /** The keys of {@link Policy}, each optional: unset ones keep the default. */
    public record Override(Duration firstTokenTimeout, @Min(0) Integer retries, Duration retryBackoff,
            Duration maxRetryAfter, Set<BackendErrorKind> retryOn) {}

    /** Every backend's policy, made once here: what the decorators look up per call. */
    public Policies policies() {
        Map<String, Policy> overridden = new java.util.HashMap<>();
        backends.forEach((id, o) -> overridden.put(id, policy(o)));
        return new Policies(policy(null), Map.copyOf(overridden));
    }

    /** The defaults with {@code o}'s keys (none where null) put over them. */
    private Policy policy(Override o) {
        if (o == null) {
            return new Policy(firstTokenTimeout, retries, retryBackoff, maxRetryAfter, retryOn);
        }
        return new Policy(
                o.firstTokenTimeout() != null ? o.firstTokenTimeout() : firstTokenTimeout,
                o.retries() != null ? o.retries() : retries,
                o.retryBackoff() != null ? o.retryBackoff() : retryBackoff,
                o.maxRetryAfter() != null ? o.maxRetryAfter() : maxRetryAfter,
                o.retryOn() != null ? o.retryOn() : retryOn);
    }

    /** Each backend's {@link Policy}, resolved: a lookup per call instead of a new policy (and set copy). */
    public record Policies(Policy defaults, Map<String, Policy> backends) {

        public Policy of(String id) {
            return backends.getOrDefault(id, defaults);
        }
    }
}
