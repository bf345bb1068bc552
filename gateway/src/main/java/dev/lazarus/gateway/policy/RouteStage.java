package dev.lazarus.gateway.policy;

import dev.lazarus.gateway.routing.ModelRoute;
import dev.lazarus.gateway.routing.RouteTarget;
import java.util.List;

/**
 * One step of request-time route planning: a pure function from the targets so far to the
 * targets to try, in order. {@link PolicyRoutePlanner} applies the policy's own stage first
 * ({@link PolicyRouteOrder}), then every bean of this type in {@code @Order} order: the
 * resilience package adds one that drops backends whose breaker is open or that are unhealthy.
 */
@FunctionalInterface
public interface RouteStage {

    List<RouteTarget> order(ModelRoute route, List<RouteTarget> targets);
}
