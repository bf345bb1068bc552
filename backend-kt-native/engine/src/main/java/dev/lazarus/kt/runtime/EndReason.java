package dev.lazarus.kt.runtime;

/** Why a sequence stopped. */
public enum EndReason {
    /** The listener declined the last token (end of generation, stop string, token limit). */
    STOPPED,
    /** The next token would not fit the context. */
    CONTEXT_FULL,
    /** The client went away. */
    CANCELLED
}
