package dev.lazarus.gateway.routing;

import java.util.List;

/**
 * Decides which backends of a route to try for one request, and in what order. The default keeps
 * the configured order; the rollback policy replaces it to put a promoted candidate first, leave
 * out a rolled-back or disabled one, or send a canary share elsewhere. Declaring a bean of this
 * type replaces the default.
 */
@FunctionalInterface
public interface RoutePlanner {

    List<RouteTarget> plan(ModelRoute route, Endpoint<?, ?> endpoint);

    static RoutePlanner configuredOrder() {
        return (route, endpoint) -> route.targets();
    }
}
