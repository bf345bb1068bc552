package dev.lazarus.gateway.routing;

import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * Where the usage tokens of a request's backend calls are counted (an API key's tokens per minute), carried in the
 * request's Reactor context from the layer that knows the caller to the one that sees each call's usage. Called once
 * per backend call, when it ends, on the request path: quick, and never throws.
 */
@FunctionalInterface
public interface UsageCharge {

    UsageCharge NONE = tokens -> {};

    /** Counts {@code tokens} (prompt and completion) of one backend call that ended. */
    void charge(long tokens);

    /** The charge {@code context} carries, or {@link #NONE}. */
    static UsageCharge of(ContextView context) {
        return context.getOrDefault(UsageCharge.class, NONE);
    }

    /** {@code context} with this charge in it. */
    default Context into(Context context) {
        return context.put(UsageCharge.class, this);
    }
}
