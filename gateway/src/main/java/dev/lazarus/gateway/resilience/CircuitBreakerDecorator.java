package dev.lazarus.gateway.resilience;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.gateway.routing.Attempt;
import dev.lazarus.gateway.routing.BackendCallDecorator;
import dev.lazarus.gateway.routing.CallLayer;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import java.util.concurrent.TimeUnit;
import reactor.core.observability.DefaultSignalListener;
import reactor.core.publisher.Flux;

/**
 * Puts each backend call under its backend's circuit breaker. A breaker that refuses the call
 * makes it fail at once with {@link BackendErrorKind#UNAVAILABLE}, so the attempt loop goes on to
 * the next backend. A permitted call's outcome is recorded by hand, because what the runbooks
 * judge is only known as the stream goes:
 * <ul>
 *   <li>failure: an error that counts ({@link BackendFailures}); other errors are ignored;</li>
 *   <li>slow: the first token came after {@code slow-time-to-first-token}, or a finished call of
 *       at least {@code min-tokens-judged} tokens generated under {@code min-throughput} tok/s;
 *       Resilience4j classifies by duration, so the duration reported is the time to first token,
 *       raised to the slow limit for a call under the throughput floor;</li>
 *   <li>a client that goes away is no failure: its time to first token is recorded when it had
 *       one, otherwise the permission is handed back.</li>
 * </ul>
 * Every outcome also feeds the backend's live figures ({@link BackendStatsRegistry}).
 */
public final class CircuitBreakerDecorator implements BackendCallDecorator {

    private final BackendBreakers breakers;
    private final BackendStatsRegistry stats;

    public CircuitBreakerDecorator(BackendBreakers breakers, BackendStatsRegistry stats) {
        this.breakers = breakers;
        this.stats = stats;
    }

    @Override
    public CallLayer layer() {
        return CallLayer.CIRCUIT_BREAKER;
    }

    @Override
    public <T> Flux<T> decorate(Attempt<T> attempt, Flux<T> call) {
        String id = attempt.backendId();
        CircuitBreaker breaker = breakers.breaker(id);
        ResilienceProperties.Breaker limits = breakers.thresholds(id);
        ChunkInspector<T> inspector = ChunkInspector.of(attempt.endpoint());
        // One operator for the permission and the four signals (tap), not a defer and a tap: each operator costs per
        // request and per chunk. A refusal is thrown by the listener's doFirst, which the tap turns into the error.
        return call.tap(() -> new Outcome<>(breaker, limits, stats, id, inspector, breakers));
    }

    /** One call: asks the breaker's permission as it is subscribed, then records exactly one outcome. */
    private static final class Outcome<T> extends DefaultSignalListener<T> {
        private final CircuitBreaker breaker;
        private final ResilienceProperties.Breaker limits;
        private final BackendStatsRegistry stats;
        private final String backendId;
        private final ChunkInspector<T> inspector;
        private final BackendBreakers breakers;
        private final GenerationClock clock = new GenerationClock();
        private boolean recorded;

        Outcome(CircuitBreaker breaker, ResilienceProperties.Breaker limits, BackendStatsRegistry stats,
                String backendId, ChunkInspector<T> inspector, BackendBreakers breakers) {
            this.breaker = breaker;
            this.limits = limits;
            this.stats = stats;
            this.backendId = backendId;
            this.inspector = inspector;
            this.breakers = breakers;
        }

        /** A refused call never reaches its source: the tap fails it with what this throws. */
        @Override
        public void doFirst() {
            if (!breaker.tryAcquirePermission()) {
                CallNotPermittedException refused = CallNotPermittedException.createCallNotPermittedException(breaker);
                throw new BackendException(BackendErrorKind.UNAVAILABLE,
                        "backend '" + backendId + "' is not called: its circuit breaker is " + breaker.getState(), null,
                        breakers.timeUntilHalfOpen(backendId).orElse(null), refused);
            }
        }

        /** The refusal above is the call's error, not a fault of the listener's to report. */
        @Override
        public void handleListenerError(Throwable listenerError) {
        }

        @Override
        public void doOnNext(T chunk) {
            clock.onChunk(chunk, inspector);
        }

        @Override
        public void doOnComplete() {
            if (once()) {
                // A whole answer that does not say when its first token came is judged by its outcome alone.
                long ttft = clock.started() ? clock.ttftNanos() : clock.answeredWhole() ? 0 : clock.elapsedNanos();
                double speed = clock.completionTokens() >= limits.minTokensJudged() ? clock.tokensPerSecond() : Double.NaN;
                boolean underFloor = !Double.isNaN(speed) && speed < limits.minThroughput();
                long reported = underFloor ? Math.max(ttft, limits.slowTimeToFirstToken().toNanos()) : ttft;
                breaker.onSuccess(reported, TimeUnit.NANOSECONDS);
                stats.success(backendId, clock.ttftNanos(), speed);
            }
        }

        @Override
        public void doOnError(Throwable error) {
            if (once()) {
                // Ignored kinds hand the permission back inside the breaker (ignoreException).
                breaker.onError(clock.elapsedNanos(), TimeUnit.NANOSECONDS, error);
                if (BackendFailures.counts(error)) {
                    stats.failure(backendId, clock.ttftNanos());
                }
            }
        }

        @Override
        public void doOnCancel() {
            if (once()) {
                if (clock.started()) {
                    breaker.onSuccess(clock.ttftNanos(), TimeUnit.NANOSECONDS);
                } else {
                    breaker.releasePermission();
                }
            }
        }

        private boolean once() {
            if (recorded) {
                return false;
            }
            recorded = true;
            return true;
        }
    }
}
