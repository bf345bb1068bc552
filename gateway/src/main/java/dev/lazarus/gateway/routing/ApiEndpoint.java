package dev.lazarus.gateway.routing;

import dev.lazarus.backend.api.BackendCapabilities;
import dev.lazarus.backend.api.ChatProtocol;
import dev.lazarus.backend.api.JsonEndpoint;
import dev.lazarus.backend.api.ProtocolMode;
import java.util.List;

/**
 * The endpoints the gateway serves its clients, each with its paths and the name metrics and logs
 * tag it with. Behaviour that differs per endpoint is chosen by an exhaustive {@code switch} over
 * this enum, so a new endpoint is a compile error wherever it must be handled. An endpoint that a
 * protocol layer translates onto chat completions (Responses, Messages) is still routed and metered
 * as itself: the API layer names it when it calls the {@link Router}.
 */
public enum ApiEndpoint {
    CHAT_COMPLETIONS("chat", "/v1/chat/completions"),
    COMPLETIONS("completion", "/v1/completions"),
    RESPONSES("responses", "/v1/responses"),
    MESSAGES("messages", "/v1/messages"),
    MESSAGES_COUNT_TOKENS("messages_count_tokens", "/v1/messages/count_tokens"),
    EMBEDDINGS("embeddings", "/v1/embeddings"),
    RERANK("rerank", "/v1/rerank", "/rerank"),
    TOKENIZE("tokenize", "/tokenize"),
    DETOKENIZE("detokenize", "/detokenize");

    private final String tag;
    private final List<String> paths;

    ApiEndpoint(String tag, String... paths) {
        this.tag = tag;
        this.paths = List.of(paths);
    }

    /** The value of the {@code endpoint} tag of metrics and of log lines. */
    public String tag() {
        return tag;
    }

    /** The request paths clients call it at, the canonical one first. */
    public List<String> paths() {
        return paths;
    }

    /** Whether a backend with {@code capabilities} can serve this endpoint (else the route skips it). */
    public boolean servedBy(BackendCapabilities capabilities) {
        return switch (this) {
            case CHAT_COMPLETIONS -> true;
            // Natively or translated onto the backend's chat completions, unless the backend turned it off.
            case RESPONSES, MESSAGES, MESSAGES_COUNT_TOKENS -> capabilities.mode(protocol()) != ProtocolMode.OFF;
            case COMPLETIONS -> capabilities.completions();
            case EMBEDDINGS, RERANK, TOKENIZE, DETOKENIZE -> capabilities.serves(jsonEndpoint());
        };
    }

    /** The protocol a backend serves this endpoint under ({@link BackendCapabilities#mode}); else null. */
    public ChatProtocol protocol() {
        return switch (this) {
            case RESPONSES -> ChatProtocol.RESPONSES;
            case MESSAGES, MESSAGES_COUNT_TOKENS -> ChatProtocol.MESSAGES;
            case CHAT_COMPLETIONS, COMPLETIONS, EMBEDDINGS, RERANK, TOKENIZE, DETOKENIZE -> null;
        };
    }

    /** The backend endpoint that serves this one, for those answered by one JSON document; else null. */
    public JsonEndpoint jsonEndpoint() {
        return switch (this) {
            case EMBEDDINGS -> JsonEndpoint.EMBEDDINGS;
            case RERANK -> JsonEndpoint.RERANK;
            case TOKENIZE -> JsonEndpoint.TOKENIZE;
            case DETOKENIZE -> JsonEndpoint.DETOKENIZE;
            case CHAT_COMPLETIONS, COMPLETIONS, RESPONSES, MESSAGES, MESSAGES_COUNT_TOKENS -> null;
        };
    }
}
