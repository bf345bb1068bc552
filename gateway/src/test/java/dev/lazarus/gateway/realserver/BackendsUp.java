package dev.lazarus.gateway.realserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.backend.api.InferenceBackend;
import dev.lazarus.gateway.resilience.HealthMonitor;
import dev.lazarus.gateway.routing.BackendRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * Waits for backends that load a model in the background (kt-native) to be UP before a test sends them requests: the
 * gateway answers 503 while a backend is LOADING, as llama-server does, and on a loaded two-core machine the load
 * outlasts the application context's start.
 */
final class BackendsUp {

    private BackendsUp() {
    }

    /** Fails when one of {@code ids} is not UP within {@code limit}; then refreshes the router's view of them. */
    static void await(BackendRegistry backends, HealthMonitor monitor, Duration limit, List<String> ids)
            throws InterruptedException {
        Instant deadline = Instant.now().plus(limit);
        for (String id : ids) {
            InferenceBackend backend = backends.find(id).orElseThrow();
            while (backend.health().block().status() != BackendHealth.Status.UP) {
                assertThat(Instant.now()).as(id + " loads its model: " + backend.health().block()).isBefore(deadline);
                Thread.sleep(20);
            }
        }
        // The router goes by the health monitor's last check, which may predate the load by a poll interval.
        monitor.refresh().block(Duration.ofSeconds(30));
    }
}
