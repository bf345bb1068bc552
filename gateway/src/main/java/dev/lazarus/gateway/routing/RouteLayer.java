package dev.lazarus.gateway.routing;

/**
 * The order in which the {@link RouteFilter}s narrow a request's plan, first applied first: the one place it is
 * stated. Each filter names its layer; {@link RouteFilter#inOrder} puts them in this order. The filters act on the
 * plan, once per request before any backend is called, so they are not among the {@link CallLayer}s, which wrap each
 * call; the two lists together are the gateway's whole pipeline around the {@link RoutePlanner}.
 */
public enum RouteLayer {
    /**
     * Leaves out backends whose breaker is open or whose health check failed; asked first why a backend was left
     * out, so that an open breaker's reopening time is the 503's {@code Retry-After}.
     */
    AVAILABILITY,
    /** Names why the rollback policy left a backend out (drained, disabled, rolled back); leaves the plan as it is. */
    POLICY_REASONS
}
