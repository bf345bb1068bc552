package dev.lazarus.backend.api;

import java.util.Collections;
import java.util.EnumSet;
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
 */
public record BackendCapabilities(
        boolean completions,
        boolean tools,
        boolean logprobs,
        boolean assistantPrefill,
        boolean passthroughExtras,
        Set<JsonEndpoint> jsonEndpoints) {

    public BackendCapabilities {
        jsonEndpoints = jsonEndpoints.isEmpty() ? Set.of() : Collections.unmodifiableSet(EnumSet.copyOf(jsonEndpoints));
    }

    /** Serving none of the {@link JsonEndpoint}s. */
    public BackendCapabilities(boolean completions, boolean tools, boolean logprobs, boolean assistantPrefill,
            boolean passthroughExtras) {
        this(completions, tools, logprobs, assistantPrefill, passthroughExtras, Set.of());
    }

    public static BackendCapabilities all() {
        return new BackendCapabilities(true, true, true, true, true, EnumSet.allOf(JsonEndpoint.class));
    }

    public boolean serves(JsonEndpoint endpoint) {
        return jsonEndpoints.contains(endpoint);
    }

    /** The same capabilities serving {@code endpoints}. */
    public BackendCapabilities withJsonEndpoints(Set<JsonEndpoint> endpoints) {
        return new BackendCapabilities(completions, tools, logprobs, assistantPrefill, passthroughExtras, endpoints);
    }
}
