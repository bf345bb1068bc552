package dev.lazarus.gateway.routing;

import dev.lazarus.backend.api.BackendException;
import java.util.List;

/**
 * A backend failed after chunks of its answer had already been relayed.
 *
 * @param model     public model name
 * @param request   the client's request (public model name)
 * @param endpoint  chat or completion
 * @param failed    the backend that failed
 * @param remaining the backends after it in the planned chain
 * @param cause     the failure
 */
public record MidStreamFailure<R, T>(
        String model, R request, Endpoint<R, T> endpoint, RouteTarget failed, List<RouteTarget> remaining,
        BackendException cause) {}
