package dev.lazarus.gateway.resilience;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.gateway.routing.Attempt;
import dev.lazarus.gateway.routing.BackendCallDecorator;
import dev.lazarus.gateway.routing.CallLayer;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import java.time.Duration;
import reactor.core.publisher.Flux;

/**
 * Makes a backend call again, on the same backend, when it failed before its first chunk with a
 * kind worth another try ({@code retry-on}): a 429 after its {@code Retry-After} (when that is within
 * {@code max-retry-after}), a 5xx or a broken stream after a short back-off. Before the first
 * chunk the client has received nothing, so the request is as new. Only then does the request move
 * to the next backend: with a single backend, a passing hiccup no longer reaches the client. A wait
 * that would end past the request's overall deadline is not taken.
 *
 * <p>It sits outside the breaker, so every try is one call the breaker judges, and a breaker that
 * opened meanwhile ends the retries (its refusal is never retried).
 */
public final class SameBackendRetryDecorator implements BackendCallDecorator {

    private final AttemptProperties.Policies policies;

    public SameBackendRetryDecorator(AttemptProperties properties) {
        this.policies = properties.policies();
    }

    @Override
    public CallLayer layer() {
        return CallLayer.SAME_BACKEND_RETRY;
    }

    @Override
    public <T> Flux<T> decorate(Attempt<T> attempt, Flux<T> call) {
        AttemptProperties.Policy policy = policies.of(attempt.backendId());
        if (policy.retries() == 0) {
            return call;
        }
        return new RetryBeforeFirst<>(call, attempt, policy);
    }

    /** How long to wait before trying {@code error}'s call again; null when it is not worth it. */
    static Duration waitBefore(Throwable error, AttemptProperties.Policy policy, int retried) {
        if (!(error instanceof BackendException failure) || !policy.retryOn().contains(failure.kind())
                || failure.getCause() instanceof CallNotPermittedException) {
            return null;
        }
        if (failure.kind() == BackendErrorKind.OVERLOADED && failure.retryAfter() != null) {
            return failure.retryAfter().compareTo(policy.maxRetryAfter()) <= 0 ? failure.retryAfter() : null;
        }
        return policy.retryBackoff().multipliedBy(1L << Math.min(retried, 16));
    }
}
