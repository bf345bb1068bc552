package dev.lazarus.gateway.policy.gate;

/** The decision gate's answer. */
public enum Verdict {
    /** Promote (automatically when auto-promote is on). */
    GO,
    /** Stays a candidate: an operator decides. */
    HOLD,
    /** Retain the oracle. */
    NO_GO
}
