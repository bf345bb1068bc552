package dev.lazarus.gateway.metrics;

import dev.lazarus.gateway.routing.ModelRoute;
import dev.lazarus.gateway.routing.RouteTable;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.boot.health.contributor.Status;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Readiness as clients feel it: every public model has at least one backend that is UP. A dead
 * fallback does not make the gateway unready; a model with no live backend does (OUT_OF_SERVICE
 * while its backends are still loading, DOWN otherwise).
 */
public final class RoutesHealthIndicator implements ReactiveHealthIndicator {

    private final RouteTable routes;
    private final Map<String, BackendHealthIndicator> backends;

    public RoutesHealthIndicator(RouteTable routes, Map<String, BackendHealthIndicator> backends) {
        this.routes = routes;
        this.backends = backends;
    }

    @Override
    public Mono<Health> health() {
        Map<String, Mono<Status>> statuses = new LinkedHashMap<>();
        backends.forEach((id, indicator) -> statuses.put(id, indicator.health().map(Health::getStatus).cache()));
        return Flux.fromIterable(routes.routes())
                .concatMap(route -> routeStatus(route, statuses).map(status -> Map.entry(route.name(), status)))
                .collectList()
                .map(entries -> {
                    Health.Builder builder = Health.up();
                    Status worst = Status.UP;
                    for (Map.Entry<String, Status> e : entries) {
                        builder.withDetail(e.getKey(), e.getValue().getCode());
                        worst = worse(worst, e.getValue());
                    }
                    return builder.status(worst).build();
                });
    }

    private static Mono<Status> routeStatus(ModelRoute route, Map<String, Mono<Status>> statuses) {
        return Flux.fromIterable(route.targets())
                .concatMap(target -> statuses.getOrDefault(target.backendId(), Mono.just(Status.DOWN)))
                .reduce(Status.DOWN, RoutesHealthIndicator::better);
    }

    private static int rank(Status s) {
        if (Status.UP.equals(s)) {
            return 2;
        }
        return Status.OUT_OF_SERVICE.equals(s) ? 1 : 0;
    }

    private static Status better(Status a, Status b) {
        return rank(a) >= rank(b) ? a : b;
    }

    private static Status worse(Status a, Status b) {
        return rank(a) <= rank(b) ? a : b;
    }
}
