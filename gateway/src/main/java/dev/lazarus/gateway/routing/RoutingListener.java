package dev.lazarus.gateway.routing;

import dev.lazarus.backend.api.BackendException;

/**
 * What the attempt loop reports as it goes, for metrics and logs. Every method runs on the request
 * path: implementations must be quick and must not throw.
 */
public interface RoutingListener {

    /**
     * A backend failed before its first chunk and the next one is tried ({@code to} is null when
     * none is left).
     */
    default void failedOver(String model, String from, String to, BackendException reason) {}

    /**
     * The first chunk of a request's answer is on its way to the client.
     *
     * @param gatewayNanos time since the request was routed, less the time spent waiting for
     *                     backends (from calling each one until its first chunk or failure)
     */
    default void firstChunk(String model, String backendId, long gatewayNanos) {}

    /** A stream interrupted after {@code tokens} tokens goes on on backend {@code to}. */
    default void resumed(String model, String from, String to, BackendException reason, int tokens) {}

    /** A stream interrupted mid-way ends with an error event; {@code why} says why it was not resumed. */
    default void notResumed(String model, String from, BackendException reason, String why) {}

    /** Every listener in {@code listeners}, in order. */
    static RoutingListener composite(java.util.List<? extends RoutingListener> listeners) {
        if (listeners.size() == 1) {
            return listeners.getFirst();
        }
        java.util.List<RoutingListener> copy = java.util.List.copyOf(listeners);
        return new RoutingListener() {
            @Override
            public void failedOver(String model, String from, String to, BackendException reason) {
                copy.forEach(l -> l.failedOver(model, from, to, reason));
            }

            @Override
            public void firstChunk(String model, String backendId, long gatewayNanos) {
                copy.forEach(l -> l.firstChunk(model, backendId, gatewayNanos));
            }

            @Override
            public void resumed(String model, String from, String to, BackendException reason, int tokens) {
                copy.forEach(l -> l.resumed(model, from, to, reason, tokens));
            }

            @Override
            public void notResumed(String model, String from, BackendException reason, String why) {
                copy.forEach(l -> l.notResumed(model, from, reason, why));
            }
        };
    }

    RoutingListener NONE = new RoutingListener() {};
}
