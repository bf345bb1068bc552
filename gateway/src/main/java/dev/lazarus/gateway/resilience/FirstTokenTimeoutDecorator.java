package dev.lazarus.gateway.resilience;

import dev.lazarus.backend.api.BackendException;
import dev.lazarus.gateway.routing.Attempt;
import dev.lazarus.gateway.routing.BackendCallDecorator;
import dev.lazarus.gateway.routing.CallLayer;
import dev.lazarus.gateway.routing.LoopTimer;
import java.time.Duration;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Ends a backend call that sent nothing within its {@code first-token-timeout} with TIMEOUT, so the
 * attempt loop moves the request to the next backend; cancelling the call lets the backend stop. This
 * is the limit on one request's wait, not the breaker's slow-call judgement (a call may be slow for
 * the breaker and still be waited for). Chunks after the first are the backend's idle timeout's
 * business. A backend that tells its progress reading the prompt ({@link dev.lazarus.backend.api.PrefillProgress}:
 * llama-server's {@code prompt_progress}, kt-native's prefill batches) starts the limit again with each: a long
 * prompt is waited for while it is being read, within the request's overall timeout; the first token is still
 * the first chunk, for metering and resume alike.
 *
 * <p>A whole (non-streamed) answer sends nothing before its end, so its limit is {@code answer-timeout}; but a
 * backend that hangs must not hold the request that long. At the first-token limit such a call's backend is
 * checked at once ({@link #alive}, its health check): one that answers up is generating and is waited for, one
 * that does not is ended there with TIMEOUT, as a stream's call would be.
 */
public final class FirstTokenTimeoutDecorator implements BackendCallDecorator {

    private final Duration answerTimeout;
    private final AttemptProperties.Policies policies;
    private final Function<String, Mono<Boolean>> alive;

    /** Whole answers waited for up to {@code answer-timeout}, whatever their backend's health. */
    public FirstTokenTimeoutDecorator(AttemptProperties properties) {
        this(properties, id -> Mono.just(true));
    }

    /** @param alive whether a backend answers its health check now, by id (within the health timeout) */
    public FirstTokenTimeoutDecorator(AttemptProperties properties, Function<String, Mono<Boolean>> alive) {
        this.answerTimeout = properties.answerTimeout();
        this.policies = properties.policies();
        this.alive = alive;
    }

    @Override
    public CallLayer layer() {
        return CallLayer.FIRST_TOKEN_TIMEOUT;
    }

    @Override
    public <T> Flux<T> decorate(Attempt<T> attempt, Flux<T> call) {
        Duration limit = policies.of(attempt.backendId()).firstTokenTimeout();
        if (attempt.endpoint().whole()) {
            // A whole answer's first byte is its last: the limit is on the whole answer.
            Flux<T> answer = new FirstSignalTimeout<>(call, answerTimeout, LoopTimer.INSTANCE,
                    () -> BackendException.timeout(
                            "backend '" + attempt.backendId() + "' did not answer within " + answerTimeout));
            if (limit.compareTo(answerTimeout) >= 0) {
                return answer;
            }
            Mono<T> hung = Mono.delay(limit, LoopTimer.INSTANCE)
                    .flatMap(t -> alive.apply(attempt.backendId()))
                    .flatMap(up -> up ? Mono.never() : Mono.error(BackendException.timeout("backend '"
                            + attempt.backendId() + "' sent nothing within " + limit
                            + " and did not answer its health check")));
            return Flux.firstWithSignal(answer, hung.flux());
        }
        return new FirstSignalTimeout<>(call, limit, LoopTimer.INSTANCE, () -> BackendException.timeout(
                "backend '" + attempt.backendId() + "' sent no first token within " + limit));
    }
}
