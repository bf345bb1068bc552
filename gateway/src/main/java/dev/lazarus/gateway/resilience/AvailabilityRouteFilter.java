package dev.lazarus.gateway.resilience;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.gateway.routing.Endpoint;
import dev.lazarus.gateway.routing.ModelRoute;
import dev.lazarus.gateway.routing.RouteFilter;
import dev.lazarus.gateway.routing.RouteLayer;
import dev.lazarus.gateway.routing.RouteTarget;
import java.util.List;

/**
 * Leaves out of a request's plan the backends that cannot take traffic now: breaker open, or last
 * health check not UP. Traffic goes to the next backend at once instead of waiting for a refusal
 * or a connection timeout; when nothing is left the router answers 503 with Retry-After (the time
 * left until an open breaker goes half-open, when that is why).
 */
public final class AvailabilityRouteFilter implements RouteFilter {

    private final BackendAvailability availability;

    public AvailabilityRouteFilter(BackendAvailability availability) {
        this.availability = availability;
    }

    @Override
    public List<RouteTarget> filter(ModelRoute route, Endpoint<?, ?> endpoint, List<RouteTarget> planned) {
        for (RouteTarget target : planned) {
            if (!availability.isAvailable(target.backendId())) {
                // Only copy when something is left out: the common case allocates nothing.
                return planned.stream().filter(t -> availability.isAvailable(t.backendId())).toList();
            }
        }
        return planned;
    }

    @Override
    public RouteLayer layer() {
        return RouteLayer.AVAILABILITY;
    }

    /** An open breaker says when it will let a probe through: the client's Retry-After is that time. */
    @Override
    public BackendException leftOut(RouteTarget target) {
        String id = target.backendId();
        if (availability.isAvailable(id)) {
            return null;
        }
        return availability.timeUntilHalfOpen(id)
                .map(left -> new BackendException(BackendErrorKind.UNAVAILABLE,
                        "backend '" + id + "' is not called: its circuit breaker is open", null, left, null))
                .orElse(null);
    }
}
