package dev.lazarus.gateway.resilience;

import dev.lazarus.gateway.routing.MidStreamMode;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig.SlidingWindowType;
import jakarta.validation.Valid;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * {@code lazarus.resilience.*}: the circuit breaker every backend gets (defaults from the
 * operators' runbooks), per-backend overrides, what to do after a mid-stream failure, and the
 * window of the live statistics.
 *
 * @param breaker     thresholds of every backend's breaker
 * @param backends    per backend id: the thresholds that differ from {@code breaker}
 * @param midStream   default for models that do not set {@code lazarus.models[].mid-stream}
 * @param statsWindow how far back the live statistics per backend (tok/s, TTFT, error rate) look
 */
@Validated
@ConfigurationProperties(prefix = "lazarus.resilience")
public record ResilienceProperties(
        @DefaultValue @Valid Breaker breaker,
        @DefaultValue Map<String, @Valid BreakerOverride> backends,
        @DefaultValue("resume") @NotNull MidStreamMode midStream,
        @DefaultValue("5m") @NotNull Duration statsWindow) {

    /**
     * One breaker's thresholds.
     *
     * @param failureRateThreshold      percentage of failed calls (5xx, timeouts, connection errors,
     *                                  stalls) in the window that opens the breaker
     * @param slowCallRateThreshold     percentage of slow calls in the window that opens the breaker
     * @param slowTimeToFirstToken      a call whose first token came later than this is slow
     * @param minThroughput             a finished call generating fewer tokens per second is slow
     * @param minTokensJudged           calls with fewer completion tokens are not judged on throughput
     * @param minimumNumberOfCalls      calls needed in the window before rates are judged
     * @param slidingWindowType         count-based (last N calls) or time-based (last N seconds)
     * @param slidingWindowSize         N of the sliding window
     * @param waitInOpenState           how long an open breaker refuses calls before it lets probes through
     * @param permittedCallsInHalfOpen  probe calls let through while half-open
     */
    public record Breaker(
            @DefaultValue("50") @DecimalMin("1") @DecimalMax("100") float failureRateThreshold,
            @DefaultValue("50") @DecimalMin("1") @DecimalMax("100") float slowCallRateThreshold,
            @DefaultValue("2s") @NotNull Duration slowTimeToFirstToken,
            @DefaultValue("10") @DecimalMin("0") double minThroughput,
            @DefaultValue("16") @Min(1) int minTokensJudged,
            @DefaultValue("10") @Min(1) int minimumNumberOfCalls,
            @DefaultValue("COUNT_BASED") @NotNull SlidingWindowType slidingWindowType,
            @DefaultValue("20") @Min(1) int slidingWindowSize,
            @DefaultValue("30s") @NotNull Duration waitInOpenState,
            @DefaultValue("3") @Min(1) int permittedCallsInHalfOpen) {

        /** These thresholds with whatever {@code override} sets. */
        public Breaker with(BreakerOverride o) {
            if (o == null) {
                return this;
            }
            return new Breaker(
                    o.failureRateThreshold() != null ? o.failureRateThreshold() : failureRateThreshold,
                    o.slowCallRateThreshold() != null ? o.slowCallRateThreshold() : slowCallRateThreshold,
                    o.slowTimeToFirstToken() != null ? o.slowTimeToFirstToken() : slowTimeToFirstToken,
                    o.minThroughput() != null ? o.minThroughput() : minThroughput,
                    o.minTokensJudged() != null ? o.minTokensJudged() : minTokensJudged,
                    o.minimumNumberOfCalls() != null ? o.minimumNumberOfCalls() : minimumNumberOfCalls,
                    o.slidingWindowType() != null ? o.slidingWindowType() : slidingWindowType,
                    o.slidingWindowSize() != null ? o.slidingWindowSize() : slidingWindowSize,
                    o.waitInOpenState() != null ? o.waitInOpenState() : waitInOpenState,
                    o.permittedCallsInHalfOpen() != null ? o.permittedCallsInHalfOpen() : permittedCallsInHalfOpen);
        }
    }

    /** The same keys as {@link Breaker}, each optional: unset ones keep the default. */
    public record BreakerOverride(
            @DecimalMin("1") @DecimalMax("100") Float failureRateThreshold,
            @DecimalMin("1") @DecimalMax("100") Float slowCallRateThreshold,
            Duration slowTimeToFirstToken,
            @DecimalMin("0") Double minThroughput,
            @Min(1) Integer minTokensJudged,
            @Min(1) Integer minimumNumberOfCalls,
            SlidingWindowType slidingWindowType,
            @Min(1) Integer slidingWindowSize,
            Duration waitInOpenState,
            @Min(1) Integer permittedCallsInHalfOpen) {}

    /** The thresholds of backend {@code id}. */
    public Breaker breakerFor(String id) {
        return breaker.with(backends.get(id));
    }
}
