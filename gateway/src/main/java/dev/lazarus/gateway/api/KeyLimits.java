package dev.lazarus.gateway.api;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.ratelimiter.internal.AtomicRateLimiter;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.springframework.http.HttpStatus;
import reactor.core.publisher.Mono;

/**
 * Applies {@link KeyLimitsProperties} to the requests of one API key: a Resilience4j rate limiter for the requests
 * per minute and a bulkhead for the requests under way, one of each per key, made at the key's first request. A
 * request over either is refused at once (no waiting) with OpenAI's 429 {@code rate_limit_exceeded} and
 * {@code Retry-After}. The limiters are named by the order of first use, never by the key.
 */
final class KeyLimits {

    static final KeyLimits NONE = new KeyLimits(new KeyLimitsProperties(0, 0));

    private final KeyLimitsProperties limits;
    private final Map<String, Limiters> byKey = new ConcurrentHashMap<>();
    private final AtomicInteger keys = new AtomicInteger();

    KeyLimits(KeyLimitsProperties limits) {
        this.limits = limits;
    }

    private record Limiters(AtomicRateLimiter perMinute, Bulkhead underWay) {}

    /** {@code request} run for {@code key} if the key's limits let it start, else the 429 as an error signal. */
    Mono<Void> admit(String key, Supplier<Mono<Void>> request) {
        if (!limits.any()) {
            return request.get();
        }
        Limiters limiters = byKey.computeIfAbsent(key, k -> limiters("key-" + keys.incrementAndGet()));
        if (limiters.underWay() != null && !limiters.underWay().tryAcquirePermission()) {
            return Mono.error(tooMany("concurrent requests", limits.concurrentRequests(), 1));
        }
        if (limiters.perMinute() != null && !limiters.perMinute().acquirePermission()) {
            if (limiters.underWay() != null) {
                limiters.underWay().onComplete();
            }
            long wait = limiters.perMinute().getDetailedMetrics().getNanosToWait();
            return Mono.error(tooMany("requests per minute", limits.requestsPerMinute(),
                    Math.max(1, TimeUnit.NANOSECONDS.toSeconds(wait + 999_999_999L))));
        }
        Mono<Void> admitted = request.get();
        return limiters.underWay() == null ? admitted : admitted.doFinally(signal -> limiters.underWay().onComplete());
    }

    private Limiters limiters(String name) {
        AtomicRateLimiter perMinute = limits.requestsPerMinute() == 0 ? null : new AtomicRateLimiter(name,
                RateLimiterConfig.custom().limitForPeriod(limits.requestsPerMinute())
                        .limitRefreshPeriod(Duration.ofMinutes(1)).timeoutDuration(Duration.ZERO).build());
        Bulkhead underWay = limits.concurrentRequests() == 0 ? null : Bulkhead.of(name, BulkheadConfig.custom()
                .maxConcurrentCalls(limits.concurrentRequests()).maxWaitDuration(Duration.ZERO).build());
        return new Limiters(perMinute, underWay);
    }

    /** OpenAI's answer to a key over a limit: 429, type {@code requests}, code {@code rate_limit_exceeded}. */
    private static ApiError tooMany(String what, int limit, long retryAfterSeconds) {
        return new ApiError(HttpStatus.TOO_MANY_REQUESTS, "requests", "rate_limit_exceeded", null,
                "Rate limit reached for " + what + " on this API key: limit " + limit + ". Please try again in "
                        + retryAfterSeconds + "s.")
                .withRetryAfter(Duration.ofSeconds(retryAfterSeconds));
    }
}
