package dev.lazarus.gateway.metrics;

import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.ProtocolNotServedException;
import dev.lazarus.gateway.resilience.ChunkInspector;
import dev.lazarus.gateway.resilience.GenerationClock;
import dev.lazarus.gateway.routing.Attempt;
import dev.lazarus.gateway.routing.BackendCallDecorator;
import dev.lazarus.gateway.routing.CallLayer;
import dev.lazarus.gateway.routing.UsageCharge;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import reactor.core.observability.DefaultSignalListener;
import reactor.core.publisher.Flux;
import reactor.core.publisher.SignalType;

/**
 * Meters every backend call, tagged by model, backend and endpoint: calls by outcome
 * ({@code lazarus.backend.calls}: {@code success}, {@code cancelled} when the client went away,
 * {@code breaker_open} when the breaker refused it, {@code protocol_not_served} when the server lacked a protocol
 * endpoint the backend tried natively, else the error kind), time to the first
 * generated token ({@code lazarus.backend.ttft}, a histogram), the gap between tokens
 * ({@code lazarus.backend.inter.token}), generation speed of finished calls
 * ({@code lazarus.backend.generation.speed}, tok/s) and prompt and completion tokens as the
 * backends report them. Meters are registered once per key; per chunk only primitive recordings. A call's tokens
 * are also charged where the request's context says ({@link UsageCharge}: its API key's tokens per minute).
 */
public final class MeteringDecorator implements BackendCallDecorator {

    private final MeterRegistry registry;
    private final Map<Key, Meters> meters = new ConcurrentHashMap<>();

    public MeteringDecorator(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public CallLayer layer() {
        return CallLayer.METERING;
    }

    @Override
    public <T> Flux<T> decorate(Attempt<T> attempt, Flux<T> call) {
        Meters m = meters.computeIfAbsent(new Key(attempt.model(), attempt.backendId(), attempt.endpoint().name()),
                this::register);
        ChunkInspector<T> inspector = ChunkInspector.of(attempt.endpoint());
        // One operator per call (tap: a listener per subscription), not a defer and three peeks.
        return call.tap(context -> new MeteredCall<>(m, inspector, UsageCharge.of(context)));
    }

    /** One call's meters: time to first token and between tokens as chunks pass, the rest at its end. */
    private final class MeteredCall<T> extends DefaultSignalListener<T> {
        private final Meters m;
        private final ChunkInspector<T> inspector;
        private final UsageCharge charge;
        private final GenerationClock clock = new GenerationClock();
        private String outcome = "success";

        MeteredCall(Meters m, ChunkInspector<T> inspector, UsageCharge charge) {
            this.m = m;
            this.inspector = inspector;
            this.charge = charge;
        }

        @Override
        public void doOnNext(T chunk) {
            boolean first = !clock.started();
            long gap = clock.onChunk(chunk, inspector);
            if (gap >= 0) {
                m.interToken.record(gap, TimeUnit.NANOSECONDS);
            } else if (first && clock.started()) {
                m.ttft.record(clock.ttftNanos(), TimeUnit.NANOSECONDS);
            }
        }

        @Override
        public void doOnError(Throwable error) {
            outcome = outcome(error);
        }

        @Override
        public void doFinally(SignalType signal) {
            String result = signal == SignalType.CANCEL ? "cancelled" : outcome;
            m.calls(registry, result).increment();
            if (clock.promptTokens() >= 0) {
                m.promptTokens.increment(clock.promptTokens());
            }
            m.completionTokens.increment(clock.completionTokens());
            charge.charge(Math.max(0, clock.promptTokens()) + (long) clock.completionTokens());
            double speed = clock.tokensPerSecond();
            if (signal == SignalType.ON_COMPLETE && !Double.isNaN(speed)) {
                m.speed.record(speed);
            }
        }
    }

    private static String outcome(Throwable error) {
        if (error.getCause() instanceof CallNotPermittedException) {
            return "breaker_open";
        }
        if (error instanceof ProtocolNotServedException) {
            return "protocol_not_served"; // learned once per backend and protocol; the request goes on translated
        }
        return error instanceof BackendException be ? be.kind().name().toLowerCase(Locale.ROOT) : "internal";
    }

    private Meters register(Key key) {
        String[] tags = {"model", key.model, "backend", key.backend, "endpoint", key.endpoint};
        return new Meters(key,
                Timer.builder("lazarus.backend.ttft")
                        .description("Time from calling a backend to its first generated token")
                        .tags(tags)
                        .publishPercentileHistogram()
                        .register(registry),
                Timer.builder("lazarus.backend.inter.token")
                        .description("Time between two generated tokens of one backend call")
                        .tags(tags)
                        .register(registry),
                DistributionSummary.builder("lazarus.backend.generation.speed")
                        .description("Generation speed of finished backend calls, first to last token")
                        .baseUnit("tokens per second")
                        .tags(tags)
                        .register(registry),
                Counter.builder("lazarus.prompt.tokens")
                        .description("Prompt tokens, as reported by the backends")
                        .tags(tags)
                        .register(registry),
                Counter.builder("lazarus.completion.tokens")
                        .description("Completion tokens generated, as reported by the backends")
                        .tags(tags)
                        .register(registry),
                new ConcurrentHashMap<>());
    }

    private record Key(String model, String backend, String endpoint) {}

    /** @param calls the call counters by outcome, registered once each (a registration per call costs a lookup by tags) */
    private record Meters(Key key, Timer ttft, Timer interToken, DistributionSummary speed, Counter promptTokens,
            Counter completionTokens, Map<String, Counter> calls) {
        Counter calls(MeterRegistry registry, String outcome) {
            return calls.computeIfAbsent(outcome, o -> Counter.builder("lazarus.backend.calls")
                    .description("Backend calls by outcome")
                    .tags("model", key.model, "backend", key.backend, "endpoint", key.endpoint, "outcome", o)
                    .register(registry));
        }
    }
}
