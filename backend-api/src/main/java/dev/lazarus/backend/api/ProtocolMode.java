package dev.lazarus.backend.api;

/** How a backend serves a {@link ChatProtocol}. */
public enum ProtocolMode {
    /** The client's request to the server's own endpoint, its answer passed through ({@link NativeProtocols}). */
    NATIVE,
    /** Translated onto the backend's chat completions by the gateway: every backend can. */
    TRANSLATE,
    /** Not served: the route skips the backend for the protocol. */
    OFF
}
