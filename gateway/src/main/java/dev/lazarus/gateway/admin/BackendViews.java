package dev.lazarus.gateway.admin;

import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.backend.api.InferenceBackend;
import dev.lazarus.backend.api.ModelInfo;
import dev.lazarus.backend.api.Redactor;
import dev.lazarus.gateway.policy.BackendHealthView;
import dev.lazarus.gateway.policy.BackendLiveStats;
import dev.lazarus.gateway.policy.BackendPolicyState;
import dev.lazarus.gateway.policy.Breakers;
import dev.lazarus.gateway.policy.PolicyCallDecorator;
import dev.lazarus.gateway.policy.PolicyEngine;
import dev.lazarus.gateway.policy.RouteOverrides;
import dev.lazarus.gateway.policy.UnknownBackendException;
import dev.lazarus.gateway.routing.BackendRegistry;
import dev.lazarus.gateway.routing.RouteTable;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.Mono;

/** Assembles {@link BackendView}s from the policy, the breakers, live stats and health. */
final class BackendViews {

    private static final Duration HEALTH_TIMEOUT = Duration.ofSeconds(2);

    private final PolicyEngine engine;
    private final BackendRegistry backends;
    private final RouteTable routes;
    private final RouteOverrides overrides;
    private final Breakers breakers;
    private final PolicyCallDecorator calls;
    private final BackendLiveStats stats;
    private final BackendHealthView health;
    private final Redactor redactor;

    BackendViews(PolicyEngine engine, BackendRegistry backends, RouteTable routes, RouteOverrides overrides,
            Breakers breakers, PolicyCallDecorator calls, BackendLiveStats stats, BackendHealthView health,
            Redactor redactor) {
        this.redactor = redactor;
        this.engine = engine;
        this.backends = backends;
        this.routes = routes;
        this.overrides = overrides;
        this.breakers = breakers;
        this.calls = calls;
        this.stats = stats;
        this.health = health;
    }

    Mono<BackendView> view(String id) {
        BackendPolicyState state = engine.state(id).orElseThrow(() -> new UnknownBackendException(id));
        InferenceBackend backend = backends.find(id).orElseThrow(() -> new UnknownBackendException(id));
        return health(backend).map(h -> new BackendView(id, backend.describe().kind(), state.role().name(),
                state.state().name(), state.reason(), state.since(), state.draining(), calls.inFlight(id),
                breakers.find(id).map(BackendViews::breaker).orElse(null), h, live(id), models(id), needs(backend)));
    }

    Mono<List<BackendView>> all() {
        return reactor.core.publisher.Flux.fromIterable(engine.backendIds())
                .flatMapSequential(this::view)
                .collectList();
    }

    private Mono<BackendView.Health> health(InferenceBackend backend) {
        if (health != null) {
            var known = health.lastHealth(backend.id());
            if (known.isPresent()) {
                return Mono.just(health(known.get(), known.get().detail()));
            }
        }
        return Mono.defer(backend::health)
                .timeout(HEALTH_TIMEOUT)
                .map(h -> health(h, redactor.redact(h.detail())))
                .onErrorResume(e -> Mono.just(new BackendView.Health(BackendHealth.Status.DOWN.name(),
                        "health check failed: " + redactor.redact(e.getMessage()), null)));
    }

    private static BackendView.Health health(BackendHealth h, String detail) {
        return new BackendView.Health(h.status().name(), detail, loading(h));
    }

    /** The {@link BackendHealth#PROGRESS} and {@link BackendHealth#ETA_SECONDS} a loading backend reports. */
    static BackendView.Loading loading(BackendHealth h) {
        if (h.status() != BackendHealth.Status.LOADING
                || !(h.details().get(BackendHealth.PROGRESS) instanceof Number progress)) {
            return null;
        }
        Long eta = h.details().get(BackendHealth.ETA_SECONDS) instanceof Number n ? n.longValue() : null;
        return new BackendView.Loading((int) Math.floor(Math.clamp(progress.doubleValue(), 0, 1) * 100), eta);
    }

    private BackendView.Live live(String id) {
        return stats.snapshot(id).map(s -> new BackendView.Live(
                Double.isNaN(s.tokensPerSecond()) ? null : s.tokensPerSecond(),
                s.ttftP50() == null ? null : s.ttftP50().toMillis(),
                s.ttftP95() == null ? null : s.ttftP95().toMillis(),
                s.errorRate(), s.calls(), s.at())).orElse(null);
    }

    private List<String> models(String id) {
        return routes.routes().stream()
                .filter(route -> overrides.targets(route).stream().anyMatch(t -> t.backendId().equals(id)))
                .map(route -> route.name())
                .toList();
    }

    /** The first served model's {@link ModelInfo#NEEDS}, as the backend reports it. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> needs(InferenceBackend backend) {
        return backend.describe().models().stream()
                .map(m -> m.metadata().get(ModelInfo.NEEDS))
                .filter(Map.class::isInstance)
                .map(n -> (Map<String, Object>) n)
                .findFirst().orElse(null);
    }

    static BackendView.Breaker breaker(CircuitBreaker breaker) {
        CircuitBreaker.Metrics m = breaker.getMetrics();
        return new BackendView.Breaker(breaker.getState().name(), m.getFailureRate(), m.getSlowCallRate(),
                m.getNumberOfBufferedCalls(), m.getNumberOfFailedCalls(), m.getNumberOfSlowCalls(),
                m.getNumberOfNotPermittedCalls());
    }
}
