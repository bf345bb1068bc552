package dev.lazarus.gateway.routing;

import java.util.List;

/**
 * Decides which backends of a route to try for one request, and in what order. The default keeps
 * the configured order; the rollback policy replaces it to put a promoted candidate first, leave
 * out a rolled-back or disabled one, or send a canary share elsewhere. Declaring a bean of this
 * type replaces the default. {@link RouteFilter} beans are applied after it whatever it is
 * ({@link #filteredBy}), so a replacement need not repeat what they do.
 */
@FunctionalInterface
public interface RoutePlanner {

    List<RouteTarget> plan(ModelRoute route, Endpoint<?, ?> endpoint);

    static RoutePlanner configuredOrder() {
        return (route, endpoint) -> route.targets();
    }

    /** This planner, then each filter ({@link RouteFilter#inOrder}) on what the previous step left. */
    default RoutePlanner filteredBy(List<? extends RouteFilter> filters) {
        if (filters.isEmpty()) {
            return this;
        }
        List<RouteFilter> copy = RouteFilter.inOrder(filters);
        return (route, endpoint) -> {
            List<RouteTarget> planned = plan(route, endpoint);
            for (RouteFilter filter : copy) {
                planned = filter.filter(route, endpoint, planned);
            }
            return planned;
        };
    }
}
