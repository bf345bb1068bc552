package dev.lazarus.backend.api;

/**
 * What a backend supports.
 *
 * @param completions          legacy {@code /v1/completions}
 * @param tools                function / tool calling
 * @param logprobs             token log-probabilities
 * @param assistantPrefill     continues a trailing assistant message instead of starting a new
 *                             turn: what mid-stream resume needs
 * @param passthroughExtras    forwards unknown request fields to an upstream server
 */
public record BackendCapabilities(
        boolean completions,
        boolean tools,
        boolean logprobs,
        boolean assistantPrefill,
        boolean passthroughExtras) {

    public static BackendCapabilities all() {
        return new BackendCapabilities(true, true, true, true, true);
    }
}
