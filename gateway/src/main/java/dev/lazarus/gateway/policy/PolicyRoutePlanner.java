package dev.lazarus.gateway.policy;

import dev.lazarus.gateway.routing.Endpoint;
import dev.lazarus.gateway.routing.ModelRoute;
import dev.lazarus.gateway.routing.RoutePlanner;
import dev.lazarus.gateway.routing.RouteTarget;
import java.util.List;

/**
 * The gateway's route planner when the policy is on: the operator's chain (or the configured one)
 * in the policy's order. The router applies the {@link dev.lazarus.gateway.routing.RouteFilter}s
 * (breakers, health) to the result, and answers 503 when nothing is left.
 */
public final class PolicyRoutePlanner implements RoutePlanner {

    private final RouteOverrides overrides;
    private final PolicyRouteOrder order;

    public PolicyRoutePlanner(RouteOverrides overrides, PolicyRouteOrder order) {
        this.overrides = overrides;
        this.order = order;
    }

    @Override
    public List<RouteTarget> plan(ModelRoute route, Endpoint<?, ?> endpoint) {
        return order.order(route, overrides.targets(route));
    }
}
