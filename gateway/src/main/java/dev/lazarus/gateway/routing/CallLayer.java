package dev.lazarus.gateway.routing;

/**
 * The order in which the {@link BackendCallDecorator}s wrap every backend call, outermost first: the
 * one place it is stated (as Resilience4j's {@code Decorators} states its own). Each decorator names
 * its layer; {@link BackendCallDecorator#chain} puts them in this order.
 */
public enum CallLayer {
    /** Metering: sees what the client waits for, including any time a layer below adds. */
    METERING,
    /** Retries on the same backend: each try is one call for the breaker below. */
    SAME_BACKEND_RETRY,
    /** The backend's circuit breaker. */
    CIRCUIT_BREAKER,
    /** The first-token limit: a call it ends counts as the breaker's failure. */
    FIRST_TOKEN_TIMEOUT,
    /** The transcript of what the call relayed, for a resume after a mid-stream failure. */
    TRANSCRIPT,
    /** The rollback policy's watch: calls in flight, and each call's own error for the fatal-error rule. */
    POLICY
}
