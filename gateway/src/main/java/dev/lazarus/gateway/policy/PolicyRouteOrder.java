package dev.lazarus.gateway.policy;

import dev.lazarus.gateway.routing.ModelRoute;
import dev.lazarus.gateway.routing.RouteTarget;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The policy's order for a request: promoted candidates first, then the oracle and any further
 * fallbacks in configured order; candidates that are not promoted, disabled or rolled-back
 * backends, and draining ones are left out. Backends the policy does not know keep their place.
 * Open breakers and failed health checks are not its business: the resilience package's
 * {@link dev.lazarus.gateway.routing.RouteFilter} runs after it.
 */
public final class PolicyRouteOrder {

    private final PolicyEngine engine;

    public PolicyRouteOrder(PolicyEngine engine) {
        this.engine = engine;
    }

    /** Pure: the targets of {@code targets} that may serve now, in the policy's order. */
    public List<RouteTarget> order(ModelRoute route, List<RouteTarget> targets) {
        List<RouteTarget> promoted = new ArrayList<>();
        List<RouteTarget> rest = new ArrayList<>();
        for (RouteTarget target : targets) {
            Optional<BackendPolicyState> state = engine.state(target.backendId());
            if (state.isEmpty()) {
                rest.add(target);
            } else if (state.get().routable()) {
                (state.get().state() == PolicyState.PROMOTED ? promoted : rest).add(target);
            }
        }
        promoted.addAll(rest);
        return promoted;
    }
}
