package dev.lazarus.backend.api;

import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * What a backend supports.
 *
 * @param completions          legacy {@code /v1/completions}
 * @param tools                function / tool calling
 * @param logprobs             token log-probabilities
 * @param assistantPrefill     continues a trailing assistant message instead of starting a new
 *                             turn: what mid-stream resume needs
 * @param passthroughExtras    forwards unknown request fields to an upstream server
 * @param jsonEndpoints        the {@link JsonEndpoint}s it serves ({@link InferenceBackend#json})
 * @param protocols            how it serves each {@link ChatProtocol}; one not listed is translated
 */
public record BackendCapabilities(
        boolean completions,
        boolean tools,
        boolean logprobs,
        boolean assistantPrefill,
        boolean passthroughExtras,
        Set<JsonEndpoint> jsonEndpoints,
        Map<ChatProtocol, ProtocolMode> protocols) {

    public BackendCapabilities {
        jsonEndpoints = jsonEndpoints.isEmpty() ? Set.of() : Collections.unmodifiableSet(EnumSet.copyOf(jsonEndpoints));
        protocols = protocols.isEmpty() ? Map.of() : Collections.unmodifiableMap(new EnumMap<>(protocols));
    }

    /** Translating every {@link ChatProtocol}. */
    public BackendCapabilities(boolean completions, boolean tools, boolean logprobs, boolean assistantPrefill,
            boolean passthroughExtras, Set<JsonEndpoint> jsonEndpoints) {
        this(completions, tools, logprobs, assistantPrefill, passthroughExtras, jsonEndpoints, Map.of());
    }

    /** Serving none of the {@link JsonEndpoint}s. */
    public BackendCapabilities(boolean completions, boolean tools, boolean logprobs, boolean assistantPrefill,
            boolean passthroughExtras) {
        this(completions, tools, logprobs, assistantPrefill, passthroughExtras, Set.of(), Map.of());
    }

    public static BackendCapabilities all() {
        return new BackendCapabilities(true, true, true, true, true, EnumSet.allOf(JsonEndpoint.class));
    }

    public boolean serves(JsonEndpoint endpoint) {
        return jsonEndpoints.contains(endpoint);
    }

    /** How it serves {@code protocol}: {@link ProtocolMode#TRANSLATE} unless it says otherwise. */
    public ProtocolMode mode(ChatProtocol protocol) {
        return protocols.getOrDefault(protocol, ProtocolMode.TRANSLATE);
    }

    /** The same capabilities serving {@code endpoints}. */
    public BackendCapabilities withJsonEndpoints(Set<JsonEndpoint> endpoints) {
        return new BackendCapabilities(completions, tools, logprobs, assistantPrefill, passthroughExtras, endpoints,
                protocols);
    }
}
