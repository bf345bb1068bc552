package dev.lazarus.gateway.resilience;

import dev.lazarus.backend.api.BackendException;
import dev.lazarus.gateway.routing.Attempt;
import dev.lazarus.gateway.routing.BackendCallDecorator;
import dev.lazarus.gateway.routing.CallLayer;
import dev.lazarus.gateway.routing.LoopTimer;
import java.time.Duration;
import reactor.core.publisher.Flux;

/**
 * Ends a backend call that sent nothing within its {@code first-token-timeout} with TIMEOUT, so the
 * attempt loop moves the request to the next backend; cancelling the call lets the backend stop. This
 * is the limit on one request's wait, not the breaker's slow-call judgement (a call may be slow for
 * the breaker and still be waited for). Chunks after the first are the backend's idle timeout's
 * business.
 */
public final class FirstTokenTimeoutDecorator implements BackendCallDecorator {

    private final Duration answerTimeout;
    private final AttemptProperties.Policies policies;

    public FirstTokenTimeoutDecorator(AttemptProperties properties) {
        this.answerTimeout = properties.answerTimeout();
        this.policies = properties.policies();
    }

    @Override
    public CallLayer layer() {
        return CallLayer.FIRST_TOKEN_TIMEOUT;
    }

    @Override
    public <T> Flux<T> decorate(Attempt<T> attempt, Flux<T> call) {
        if (attempt.endpoint().whole()) {
            // A whole answer's first byte is its last: the limit is on the whole answer.
            return new FirstSignalTimeout<>(call, answerTimeout, LoopTimer.INSTANCE, () -> BackendException.timeout(
                    "backend '" + attempt.backendId() + "' did not answer within " + answerTimeout));
        }
        Duration limit = policies.of(attempt.backendId()).firstTokenTimeout();
        return new FirstSignalTimeout<>(call, limit, LoopTimer.INSTANCE, () -> BackendException.timeout(
                "backend '" + attempt.backendId() + "' sent no first token within " + limit));
    }
}
