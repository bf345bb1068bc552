package dev.lazarus.gateway.routing;

import java.util.List;

/**
 * One backend call within a request: what a {@link BackendCallDecorator} sees.
 *
 * @param model    public model name
 * @param target   the backend being called
 * @param endpoint chat or completion
 * @param index    position in the planned fallback chain, 0 for the first choice
 * @param after    the targets after this one in the plan
 * @param <T>      chunk type
 */
public record Attempt<T>(String model, RouteTarget target, Endpoint<?, T> endpoint, int index, List<RouteTarget> after) {

    public String backendId() {
        return target.backendId();
    }
}
