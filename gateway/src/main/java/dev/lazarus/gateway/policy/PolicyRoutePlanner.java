package dev.lazarus.gateway.policy;

import dev.lazarus.backend.api.BackendException;
import dev.lazarus.gateway.routing.Endpoint;
import dev.lazarus.gateway.routing.ModelRoute;
import dev.lazarus.gateway.routing.RoutePlanner;
import dev.lazarus.gateway.routing.RouteTarget;
import java.util.List;

/**
 * The gateway's route planner when the policy is on: the operator's chain (or the configured one),
 * then every {@link RouteStage} in turn, the policy's own first.
 */
public final class PolicyRoutePlanner implements RoutePlanner {

    private final RouteOverrides overrides;
    private final List<RouteStage> stages;

    public PolicyRoutePlanner(RouteOverrides overrides, List<RouteStage> stages) {
        this.overrides = overrides;
        this.stages = List.copyOf(stages);
    }

    @Override
    public List<RouteTarget> plan(ModelRoute route, Endpoint<?, ?> endpoint) {
        List<RouteTarget> targets = overrides.targets(route);
        for (RouteStage stage : stages) {
            targets = stage.order(route, targets);
        }
        if (targets.isEmpty()) {
            // Every backend is disabled, rolled back or draining: that is "unavailable", not a bad request.
            throw BackendException.unavailable("No backend of model '" + route.name()
                    + "' is in service (disabled, rolled back or draining).");
        }
        return targets;
    }
}
