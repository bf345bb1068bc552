package dev.lazarus.gateway.resilience;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.gateway.routing.Attempt;
import dev.lazarus.gateway.routing.BackendCallDecorator;
import dev.lazarus.gateway.routing.RequestDeadline;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

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

    private static final Logger log = LoggerFactory.getLogger(SameBackendRetryDecorator.class);

    private final AttemptProperties.Policies policies;

    public SameBackendRetryDecorator(AttemptProperties properties) {
        this.policies = properties.policies();
    }

    @Override
    public <T> Flux<T> decorate(Attempt<T> attempt, Flux<T> call) {
        AttemptProperties.Policy policy = policies.of(attempt.backendId());
        if (policy.retries() == 0) {
            return call;
        }
        return tryCall(attempt, call, policy, 0);
    }

    private <T> Flux<T> tryCall(Attempt<T> attempt, Flux<T> call, AttemptProperties.Policy policy, int retried) {
        return Flux.defer(() -> {
            boolean[] relayed = {false};
            return call.doOnNext(chunk -> relayed[0] = true)
                    .onErrorResume(error -> relayed[0] || retried >= policy.retries()
                            ? Flux.error(error)
                            : Flux.deferContextual(context -> {
                                Duration wait = waitBefore(error, policy, retried);
                                Duration left = RequestDeadline.remaining(context);
                                if (wait == null || (left != null && wait.compareTo(left) >= 0)) {
                                    return Flux.error(error);
                                }
                                log.info("model '{}': backend '{}' failed before its first token ({}); trying it again in {} ms",
                                        attempt.model(), attempt.backendId(), error.getMessage(), wait.toMillis());
                                return Mono.delay(wait).thenMany(tryCall(attempt, call, policy, retried + 1));
                            }));
        });
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
