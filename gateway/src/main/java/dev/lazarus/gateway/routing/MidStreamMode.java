package dev.lazarus.gateway.routing;

/** What the client gets when the backend serving its stream fails after the first token. */
public enum MidStreamMode {
    /** The answer continues on the next backend that can continue an assistant message. */
    RESUME,
    /** An OpenAI-style error event, then {@code [DONE]}. */
    ERROR
}
