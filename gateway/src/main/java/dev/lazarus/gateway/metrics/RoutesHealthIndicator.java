package dev.lazarus.gateway.metrics;

import dev.lazarus.gateway.routing.ModelRoute;
import dev.lazarus.gateway.routing.RouteTable;
import java.util.Map;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * Readiness as clients feel it: every public model has at least one backend that is UP. A dead
 * fallback does not make the gateway unready; a model with no live backend does (OUT_OF_SERVICE
 * while its backends are still loading, DOWN otherwise). Reads the health monitor's last checks.
 */
public final class RoutesHealthIndicator implements HealthIndicator {

    private final RouteTable routes;
    private final Map<String, BackendHealthIndicator> backends;

    public RoutesHealthIndicator(RouteTable routes, Map<String, BackendHealthIndicator> backends) {
        this.routes = routes;
        this.backends = backends;
    }

    @Override
    public Health health() {
        Health.Builder builder = Health.up();
        Status worst = Status.UP;
        for (ModelRoute route : routes.routes()) {
            Status status = routeStatus(route);
            builder.withDetail(route.name(), status.getCode());
            worst = worse(worst, status);
        }
        return builder.status(worst).build();
    }

    private Status routeStatus(ModelRoute route) {
        Status best = Status.DOWN;
        for (var target : route.targets()) {
            BackendHealthIndicator indicator = backends.get(target.backendId());
            best = better(best, indicator == null ? Status.DOWN : indicator.status());
        }
        return best;
    }

    private static int rank(Status s) {
        if (Status.UP.equals(s)) {
            return 2;
        }
        return Status.OUT_OF_SERVICE.equals(s) || Status.UNKNOWN.equals(s) ? 1 : 0;
    }

    private static Status better(Status a, Status b) {
        return rank(a) >= rank(b) ? a : b;
    }

    private static Status worse(Status a, Status b) {
        return rank(a) <= rank(b) ? a : b;
    }
}
