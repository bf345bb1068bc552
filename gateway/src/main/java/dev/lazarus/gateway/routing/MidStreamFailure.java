package dev.lazarus.gateway.routing;

import dev.lazarus.backend.api.BackendException;
import java.util.List;
import java.util.function.BiFunction;
import reactor.core.publisher.Flux;

/**
 * A backend failed after chunks of its answer had already been relayed.
 *
 * @param model     public model name
 * @param request   the request the failed backend was sent (public model name)
 * @param endpoint  chat or completion
 * @param failed    the backend that failed
 * @param remaining the backends after it in the planned chain
 * @param cause     the failure
 * @param attempts  runs a plan through the same attempt loop (decorators, failover before the
 *                  first chunk, and this resumer again for a failure after it)
 */
public record MidStreamFailure<R, T>(
        String model, R request, Endpoint<R, T> endpoint, RouteTarget failed, List<RouteTarget> remaining,
        BackendException cause, BiFunction<List<RouteTarget>, R, Flux<T>> attempts) {

    /** Sends {@code continuation} along {@code plan} the way the original request went along its own. */
    public Flux<T> continueOn(List<RouteTarget> plan, R continuation) {
        return attempts.apply(plan, continuation);
    }
}
