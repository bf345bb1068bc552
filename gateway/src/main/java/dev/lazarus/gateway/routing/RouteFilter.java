package dev.lazarus.gateway.routing;

import dev.lazarus.backend.api.BackendException;
import java.util.List;

/**
 * One step after the {@link RoutePlanner}: narrows or reorders the targets it planned for one
 * request (for example: leave out backends whose breaker is open or whose health check fails).
 * Every bean of this type is applied, in {@link org.springframework.core.annotation.Order} order,
 * to whatever the planner bean returned, so that a policy that replaces the planner keeps these
 * protections without knowing about them. A filter must not add targets that are not in the route.
 */
@FunctionalInterface
public interface RouteFilter {

    List<RouteTarget> filter(ModelRoute route, Endpoint<?, ?> endpoint, List<RouteTarget> planned);

    /**
     * When this filter leaves {@code target} out now and can say why in the client's terms (an
     * open breaker and when it reopens), that failure; null otherwise. The router reports it when
     * nothing is left to try, so the 503's {@code Retry-After} is told by the reason.
     */
    default BackendException leftOut(RouteTarget target) {
        return null;
    }
}
