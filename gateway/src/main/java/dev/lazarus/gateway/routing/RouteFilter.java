package dev.lazarus.gateway.routing;

import dev.lazarus.backend.api.BackendException;
import java.util.Comparator;
import java.util.List;

/**
 * One step after the {@link RoutePlanner}: narrows or reorders the targets it planned for one
 * request (for example: leave out backends whose breaker is open or whose health check fails).
 * Every bean of this type is applied, at its {@link #layer()} (the order is stated once, in
 * {@link RouteLayer}), to whatever the planner bean returned, so that a policy that replaces the planner keeps these
 * protections without knowing about them. A filter must not add targets that are not in the route.
 */
public interface RouteFilter {

    List<RouteTarget> filter(ModelRoute route, Endpoint<?, ?> endpoint, List<RouteTarget> planned);

    /** Where this filter acts on the plan. */
    RouteLayer layer();

    /** {@code filters} in {@link RouteLayer} order, the first applied first; filters of one layer in the order given. */
    static List<RouteFilter> inOrder(List<? extends RouteFilter> filters) {
        return filters.stream().sorted(Comparator.comparing(RouteFilter::layer)).map(RouteFilter.class::cast).toList();
    }

    /**
     * When this filter leaves {@code target} out now and can say why in the client's terms (an
     * open breaker and when it reopens), that failure; null otherwise. The router reports it when
     * nothing is left to try, so the 503's {@code Retry-After} is told by the reason.
     */
    default BackendException leftOut(RouteTarget target) {
        return null;
    }
}
