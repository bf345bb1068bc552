package dev.lazarus.backend.api;

/**
 * The client protocols the gateway serves on top of chat completions (Anthropic's Messages, OpenAI's Responses). A
 * backend serves each one way ({@link ProtocolMode}): translated onto its chat completions, passed through to its
 * server's own endpoint ({@link NativeProtocols}), or not at all.
 */
public enum ChatProtocol {
    MESSAGES("/v1/messages"),
    RESPONSES("/v1/responses");

    private final String path;

    ChatProtocol(String path) {
        this.path = path;
    }

    /** Where a server that speaks the protocol serves it. */
    public String path() {
        return path;
    }
}
