package dev.lazarus.gateway.api;

import dev.lazarus.gateway.config.GatewayConfigException;
import dev.lazarus.gateway.routing.UsageCharge;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.ratelimiter.internal.AtomicRateLimiter;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import reactor.core.publisher.Mono;

/**
 * Applies {@link KeyLimitsProperties} to the requests of one API key: a Resilience4j rate limiter for the requests
 * per minute, a bulkhead for the requests under way and a {@link TokenWindow} for the tokens per minute, one of each
 * per key, made at the key's first request. A request over any is refused at once (no waiting) with OpenAI's 429
 * {@code rate_limit_exceeded} and {@code Retry-After}. The tokens of a request's backend calls are charged to its key
 * as each call ends ({@link UsageCharge}, through the request's context). A key is named by its configured name, else
 * by the order of first use, never by the key itself.
 */
final class KeyLimits {

    private static final Logger log = LoggerFactory.getLogger(KeyLimits.class);

    static final KeyLimits NONE = new KeyLimits(new KeyLimitsProperties(0, 0, 0, List.of()));

    private final KeyLimitsProperties properties;
    private final Map<String, KeyLimitsProperties.Key> ownLimits = new HashMap<>();
    private final Map<String, Limiters> byKey = new ConcurrentHashMap<>();
    private final AtomicInteger keys = new AtomicInteger();

    KeyLimits(KeyLimitsProperties properties) {
        this.properties = properties;
        properties.keys().forEach(own -> ownLimits.put(own.key(), own));
    }

    /**
     * Limits for the accepted {@code apiKeys}: refuses a key of its own that is not one of them (it would never be
     * used), and says once when limits are set but no key is, so that nothing is limited.
     */
    static KeyLimits of(KeyLimitsProperties properties, List<String> apiKeys) {
        for (KeyLimitsProperties.Key own : properties.keys()) {
            if (!apiKeys.contains(own.key())) {
                throw new GatewayConfigException("lazarus.key-limits.keys entry '" + own.name()
                        + "' has a key that is not one of lazarus.security.api-keys: add it there, or remove the entry");
            }
        }
        if (apiKeys.isEmpty() && properties.any()) {
            log.warn("lazarus.key-limits are set but lazarus.security.api-keys is empty: requests carry no key, so "
                    + "no limit applies. Set API keys to limit each caller");
        }
        return new KeyLimits(properties);
    }

    private record Limiters(AtomicRateLimiter perMinute, Bulkhead underWay, TokenWindow tokens,
            KeyLimitsProperties.Limits limits, UsageCharge charge) {}

    /** {@code request} run for {@code key} if the key's limits let it start, else the 429 as an error signal. */
    Mono<Void> admit(String key, Supplier<Mono<Void>> request) {
        if (!properties.any()) {
            return request.get();
        }
        Limiters limiters = byKey.computeIfAbsent(key, this::limiters);
        KeyLimitsProperties.Limits limits = limiters.limits();
        if (limiters.underWay() != null && !limiters.underWay().tryAcquirePermission()) {
            return Mono.error(tooMany("requests", "concurrent requests", "" + limits.concurrentRequests(), 1));
        }
        long tokenWait = limiters.tokens() == null ? 0 : limiters.tokens().nanosUntilOpen();
        if (tokenWait > 0) {
            release(limiters);
            return Mono.error(tooMany("tokens", "tokens per minute", limits.tokensPerMinute() + ", used "
                    + limiters.tokens().used(), seconds(tokenWait)));
        }
        if (limiters.perMinute() != null && !limiters.perMinute().acquirePermission()) {
            release(limiters);
            long wait = limiters.perMinute().getDetailedMetrics().getNanosToWait();
            return Mono.error(tooMany("requests", "requests per minute", "" + limits.requestsPerMinute(), seconds(wait)));
        }
        Mono<Void> admitted = request.get();
        if (limiters.charge() != UsageCharge.NONE) {
            admitted = admitted.contextWrite(limiters.charge()::into);
        }
        return limiters.underWay() == null ? admitted : admitted.doFinally(signal -> release(limiters));
    }

    private static void release(Limiters limiters) {
        if (limiters.underWay() != null) {
            limiters.underWay().onComplete();
        }
    }

    private static long seconds(long nanos) {
        return Math.max(1, TimeUnit.NANOSECONDS.toSeconds(nanos + 999_999_999L));
    }

    private Limiters limiters(String key) {
        KeyLimitsProperties.Key own = ownLimits.get(key);
        String name = own != null ? own.name() : "key-" + keys.incrementAndGet();
        KeyLimitsProperties.Limits limits = own != null ? properties.of(own) : properties.defaults();
        AtomicRateLimiter perMinute = limits.requestsPerMinute() == 0 ? null : new AtomicRateLimiter(name,
                RateLimiterConfig.custom().limitForPeriod(limits.requestsPerMinute())
                        .limitRefreshPeriod(Duration.ofMinutes(1)).timeoutDuration(Duration.ZERO).build());
        Bulkhead underWay = limits.concurrentRequests() == 0 ? null : Bulkhead.of(name, BulkheadConfig.custom()
                .maxConcurrentCalls(limits.concurrentRequests()).maxWaitDuration(Duration.ZERO).build());
        TokenWindow tokens = limits.tokensPerMinute() == 0 ? null
                : new TokenWindow(limits.tokensPerMinute(), Duration.ofMinutes(1));
        return new Limiters(perMinute, underWay, tokens, limits, tokens == null ? UsageCharge.NONE : tokens::charge);
    }

    /**
     * OpenAI's answer to a key over a limit: 429, type {@code requests} or {@code tokens}, code
     * {@code rate_limit_exceeded}.
     */
    private static ApiError tooMany(String type, String what, String limit, long retryAfterSeconds) {
        return new ApiError(HttpStatus.TOO_MANY_REQUESTS, type, "rate_limit_exceeded", null,
                "Rate limit reached for " + what + " on this API key: limit " + limit + ". Please try again in "
                        + retryAfterSeconds + "s.")
                .withRetryAfter(Duration.ofSeconds(retryAfterSeconds));
    }
}
