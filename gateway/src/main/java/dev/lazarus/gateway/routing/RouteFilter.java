package dev.lazarus.gateway.routing;

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
}
