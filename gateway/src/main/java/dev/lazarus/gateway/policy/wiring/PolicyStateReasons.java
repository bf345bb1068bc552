package dev.lazarus.gateway.policy.wiring;

import dev.lazarus.backend.api.BackendException;
import dev.lazarus.gateway.policy.PolicyEngine;
import dev.lazarus.gateway.routing.Endpoint;
import dev.lazarus.gateway.routing.LeftOutByPolicy;
import dev.lazarus.gateway.routing.ModelRoute;
import dev.lazarus.gateway.routing.RouteFilter;
import dev.lazarus.gateway.routing.RouteLayer;
import dev.lazarus.gateway.routing.RouteTarget;
import java.util.List;
import java.util.Locale;

/**
 * Says why the policy left a backend out of a request's plan (drained, disabled, rolled back, still a candidate),
 * so that the 503 a client gets when nothing is left names the reason instead of "not available". Leaves plans
 * as they are: the policy's planner already left those backends out.
 */
final class PolicyStateReasons implements RouteFilter {

    private final PolicyEngine engine;

    PolicyStateReasons(PolicyEngine engine) {
        this.engine = engine;
    }

    @Override
    public List<RouteTarget> filter(ModelRoute route, Endpoint<?, ?> endpoint, List<RouteTarget> planned) {
        return planned;
    }

    @Override
    public RouteLayer layer() {
        return RouteLayer.POLICY_REASONS;
    }

    @Override
    public BackendException leftOut(RouteTarget target) {
        return engine.state(target.backendId()).filter(s -> !s.routable()).map(s -> (BackendException) new LeftOutByPolicy(
                s.backendId(), s.state().serves() ? "drained by an operator"
                        : s.state().name().toLowerCase(Locale.ROOT).replace('_', ' ')))
                .orElse(null);
    }
}
