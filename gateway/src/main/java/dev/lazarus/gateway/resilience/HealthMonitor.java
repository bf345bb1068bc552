package dev.lazarus.gateway.resilience;

import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.backend.api.InferenceBackend;
import dev.lazarus.backend.api.Redactor;
import dev.lazarus.gateway.routing.BackendRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Checks every backend on an interval with its cheap health call (llama-server's {@code /health},
 * never a completion) and keeps the last answer, which routing, readiness and the admin API read
 * instead of calling the backends themselves. The first round runs before the server takes
 * requests, so a backend that is down at start is never routed to; one that comes back is routed to
 * again after its next good check.
 */
public final class HealthMonitor implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(HealthMonitor.class);

    private final BackendRegistry backends;
    private final HealthProperties properties;
    private final Clock clock;
    private final Redactor redactor;
    private final Map<String, HealthResult> latest = new ConcurrentHashMap<>();
    private volatile Disposable ticker;

    public HealthMonitor(BackendRegistry backends, HealthProperties properties) {
        this(backends, properties, Redactor.shapesOnly());
    }

    /** @param redactor applied to every answer: what is kept here is shown by actuator, the admin API and logs */
    public HealthMonitor(BackendRegistry backends, HealthProperties properties, Redactor redactor) {
        this(backends, properties, Clock.systemUTC(), redactor);
    }

    HealthMonitor(BackendRegistry backends, HealthProperties properties, Clock clock) {
        this(backends, properties, clock, Redactor.shapesOnly());
    }

    private HealthMonitor(BackendRegistry backends, HealthProperties properties, Clock clock, Redactor redactor) {
        this.backends = backends;
        this.properties = properties;
        this.clock = clock;
        this.redactor = redactor;
    }

    /** The last check of backend {@code id}; empty before the first one answered. */
    public Optional<HealthResult> latest(String id) {
        return Optional.ofNullable(latest.get(id));
    }

    /** Up, or not checked yet (the first round runs before traffic, so that is only for a moment). */
    public boolean isHealthy(String id) {
        HealthResult result = latest.get(id);
        return result == null || result.isUp();
    }

    /**
     * Checks backend {@code id} now, within the health timeout (the result recorded as a round's is); whether it is
     * up. An id no backend has: true.
     */
    public Mono<Boolean> checkNow(String id) {
        return backends.find(id).map(backend -> check(backend).map(HealthResult::isUp)).orElse(Mono.just(true));
    }

    /** Checks every backend now, in parallel; completes when all answered or timed out. */
    public Mono<Void> refresh() {
        return Flux.fromIterable(backends.all()).flatMap(this::check).then();
    }

    private Mono<HealthResult> check(InferenceBackend backend) {
        return Mono.defer(() -> {
            long start = System.nanoTime();
            return Mono.defer(backend::health)
                    .timeout(properties.timeout(), Mono.fromSupplier(() ->
                            BackendHealth.down("health check did not answer within " + properties.timeout())))
                    .onErrorResume(e -> Mono.just(BackendHealth.down("health check failed: " + e.getMessage())))
                    .map(health -> new BackendHealth(health.status(), redactor.redact(health.detail()),
                            redactor.redactValues(health.details())))
                    .map(health -> new HealthResult(health, clock.instant(), Duration.ofNanos(System.nanoTime() - start)))
                    .doOnNext(result -> record(backend.id(), result));
        });
    }

    private void record(String id, HealthResult result) {
        HealthResult previous = latest.put(id, result);
        BackendHealth.Status before = previous == null ? null : previous.health().status();
        BackendHealth.Status now = result.health().status();
        if (before != now) {
            if (now == BackendHealth.Status.UP) {
                log.info("backend '{}' is UP{}", id, before == null ? "" : " again (was " + before + ")");
            } else {
                log.warn("backend '{}' is {}: {}", id, now, result.health().detail());
            }
        }
    }

    @Override
    public void start() {
        // Bounded: every check has its own timeout.
        refresh().block(properties.timeout().plusSeconds(5));
        Duration interval = properties.interval();
        ticker = Flux.interval(interval, interval, Schedulers.parallel())
                .onBackpressureDrop()
                .concatMap(tick -> refresh(), 1)
                .subscribe(null, e -> log.error("health checks stopped: {}", e.toString()));
    }

    @Override
    public void stop() {
        Disposable running = ticker;
        if (running != null) {
            running.dispose();
            ticker = null;
        }
    }

    @Override
    public boolean isRunning() {
        return ticker != null;
    }

    /** Before the web server starts (which is at {@code DEFAULT_PHASE - 1024}) and stops after it. */
    @Override
    public int getPhase() {
        return SmartLifecycle.DEFAULT_PHASE - 2048;
    }
}
