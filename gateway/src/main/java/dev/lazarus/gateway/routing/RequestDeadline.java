package dev.lazarus.gateway.routing;

import java.time.Duration;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * When the request's overall time is up, carried in the Reactor context of its attempts so that a
 * decorator that waits (a retry after {@code Retry-After}) never waits past it.
 */
public final class RequestDeadline {

    private static final String KEY = RequestDeadline.class.getName();

    private RequestDeadline() {
    }

    /** A context entry for a request that must end within {@code timeout} from now. */
    static Context in(Duration timeout) {
        return Context.of(KEY, System.nanoTime() + timeout.toNanos());
    }

    /** The time left, or null when the request has no deadline (a call made outside the router). */
    public static Duration remaining(ContextView context) {
        Long deadline = context.getOrDefault(KEY, null);
        return deadline == null ? null : Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
    }
}
