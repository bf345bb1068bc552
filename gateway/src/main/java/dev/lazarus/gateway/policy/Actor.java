package dev.lazarus.gateway.policy;

/** Who caused a transition, as the audit journal records it. */
public enum Actor {
    /** A person through the admin API. */
    OPERATOR,
    /** The runtime pivot-back rules. */
    POLICY,
    /** The hardware and memory checks before a candidate may leave {@code DISABLED}. */
    PREFLIGHT,
    /** The decision gate (benchmark verdict). */
    GATE,
    /** The gateway itself at start (first registration of a backend). */
    SYSTEM,
    /** A caller of the admin API whose token was missing or wrong (journalled, never the token). */
    UNAUTHENTICATED
}
