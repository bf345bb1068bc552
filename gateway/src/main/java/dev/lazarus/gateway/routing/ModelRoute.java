package dev.lazarus.gateway.routing;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * A public model and how it is served.
 *
 * @param name           the name clients ask for
 * @param targets        backends in configured fallback order (never empty)
 * @param ownedBy        shown in {@code /v1/models}
 * @param overallTimeout the longest one request for this model may take
 * @param midStream      what a client gets when its stream's backend fails after the first token;
 *                       null: the gateway's default
 * @param defaultMaxTokens the output limit of a chat request that sets none; null: none
 */
public record ModelRoute(String name, List<RouteTarget> targets, String ownedBy, Duration overallTimeout,
        MidStreamMode midStream, Integer defaultMaxTokens) {

    public ModelRoute(String name, List<RouteTarget> targets, String ownedBy, Duration overallTimeout) {
        this(name, targets, ownedBy, overallTimeout, null);
    }

    public ModelRoute(String name, List<RouteTarget> targets, String ownedBy, Duration overallTimeout,
            MidStreamMode midStream) {
        this(name, targets, ownedBy, overallTimeout, midStream, null);
    }

    public ModelRoute {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(overallTimeout, "overallTimeout");
        targets = List.copyOf(targets);
        if (targets.isEmpty()) {
            throw new IllegalArgumentException("model '" + name + "' has no backends");
        }
    }
}
