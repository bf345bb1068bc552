package dev.lazarus.gateway.metrics;

import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.Usage;
import dev.lazarus.gateway.routing.Attempt;
import dev.lazarus.gateway.routing.BackendCallDecorator;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import reactor.core.publisher.Flux;
import reactor.core.publisher.SignalType;

/**
 * Meters every backend call: calls by model, backend, endpoint and outcome
 * ({@code lazarus.backend.calls}), time to first chunk ({@code lazarus.backend.ttft}) and
 * completion tokens from the usage chunk ({@code lazarus.completion.tokens}). Outcome is
 * {@code success}, {@code cancelled} (the client went away) or the error kind in lower case.
 */
public final class MeteringDecorator implements BackendCallDecorator {

    private final MeterRegistry registry;
    private final Map<Key, Meters> meters = new ConcurrentHashMap<>();

    public MeteringDecorator(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public <T> Flux<T> decorate(Attempt<T> attempt, Flux<T> call) {
        Meters m = meters.computeIfAbsent(new Key(attempt.model(), attempt.backendId(), attempt.endpoint().name()),
                this::register);
        return Flux.defer(() -> {
            long start = System.nanoTime();
            boolean[] first = {true};
            String[] outcome = {"success"};
            return call
                    .doOnNext(chunk -> {
                        if (first[0]) {
                            first[0] = false;
                            m.ttft.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
                        }
                        Usage usage = attempt.endpoint().usage().apply(chunk);
                        if (usage != null) {
                            m.completionTokens.increment(usage.completionTokens());
                        }
                    })
                    .doOnError(error -> outcome[0] = error instanceof BackendException be
                            ? be.kind().name().toLowerCase(Locale.ROOT) : "internal")
                    .doFinally(signal -> {
                        String result = signal == SignalType.CANCEL ? "cancelled" : outcome[0];
                        m.calls(registry, result).increment();
                    });
        });
    }

    private Meters register(Key key) {
        return new Meters(key,
                Timer.builder("lazarus.backend.ttft")
                        .description("Time from calling a backend to its first chunk")
                        .tags("model", key.model, "backend", key.backend, "endpoint", key.endpoint)
                        .register(registry),
                Counter.builder("lazarus.completion.tokens")
                        .description("Completion tokens generated, as reported by the backends")
                        .tags("model", key.model, "backend", key.backend, "endpoint", key.endpoint)
                        .register(registry));
    }

    private record Key(String model, String backend, String endpoint) {}

    private record Meters(Key key, Timer ttft, Counter completionTokens) {
        Counter calls(MeterRegistry registry, String outcome) {
            return Counter.builder("lazarus.backend.calls")
                    .description("Backend calls by outcome")
                    .tags("model", key.model, "backend", key.backend, "endpoint", key.endpoint, "outcome", outcome)
                    .register(registry);
        }
    }
}
