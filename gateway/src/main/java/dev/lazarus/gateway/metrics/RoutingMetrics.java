package dev.lazarus.gateway.metrics;

import dev.lazarus.backend.api.BackendException;
import dev.lazarus.gateway.routing.RoutingListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Meters what routing does beyond single calls: failovers by from, to, reason and phase
 * ({@code lazarus.failovers}), mid-stream resumes ({@code lazarus.stream.resumes}) and interrupted
 * streams that were not resumed ({@code lazarus.stream.interruptions}), and the gateway's own
 * share of the time to first byte ({@code lazarus.gateway.overhead}). Failovers are rare, so their
 * counters are looked up per event; the overhead timer is cached per model.
 */
public final class RoutingMetrics implements RoutingListener {

    private final MeterRegistry registry;
    private final Map<String, Timer> overhead = new ConcurrentHashMap<>();

    public RoutingMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void failedOver(String model, String from, String to, BackendException reason) {
        failover(model, from, to == null ? "none" : to, reason, "before_first_token");
    }

    @Override
    public void resumed(String model, String from, String to, BackendException reason, int tokens) {
        failover(model, from, to, reason, "mid_stream");
        Counter.builder("lazarus.stream.resumes")
                .description("Streams continued on another backend after their backend failed mid-way")
                .tags("model", model, "from", from, "to", to)
                .register(registry).increment();
    }

    @Override
    public void notResumed(String model, String from, BackendException reason, String why) {
        Counter.builder("lazarus.stream.interruptions")
                .description("Streams ended with an error event after their backend failed mid-way")
                .tags("model", model, "backend", from, "reason", kind(reason))
                .register(registry).increment();
    }

    @Override
    public void firstChunk(String model, String backendId, long gatewayNanos) {
        overhead.computeIfAbsent(model, m -> Timer.builder("lazarus.gateway.overhead")
                        .description("Time to the first chunk spent in the gateway itself, backend waits excluded")
                        .tags("model", m)
                        .publishPercentiles(0.5, 0.99)
                        .register(registry))
                .record(gatewayNanos, TimeUnit.NANOSECONDS);
    }

    private void failover(String model, String from, String to, BackendException reason, String phase) {
        Counter.builder("lazarus.failovers")
                .description("Requests moved from one backend to the next")
                .tags("model", model, "from", from, "to", to, "reason", kind(reason), "phase", phase)
                .register(registry).increment();
    }

    private static String kind(BackendException e) {
        return e.kind().name().toLowerCase(Locale.ROOT);
    }
}
