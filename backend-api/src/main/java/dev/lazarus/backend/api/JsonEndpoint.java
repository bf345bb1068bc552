package dev.lazarus.backend.api;

/**
 * The endpoints beside chat and completions that a backend may serve: each takes one JSON request
 * and gives one JSON answer ({@link InferenceBackend#json}). A backend says which it serves in its
 * {@link BackendCapabilities#jsonEndpoints() capabilities}; the gateway routes a request for one only
 * to backends that serve it. The shapes are OpenAI's (embeddings) and llama-server's (the others).
 */
public enum JsonEndpoint {
    /** {@code {"model","input","encoding_format"?}} → {@code {"object":"list","data":[{"embedding"}],"model","usage"}}. */
    EMBEDDINGS("/v1/embeddings"),
    /** {@code {"model","query","documents","top_n"?}} → {@code {"results":[{"index","relevance_score"}],"model","usage"}}. */
    RERANK("/v1/rerank"),
    /** {@code {"content","add_special"?,"with_pieces"?}} → {@code {"tokens":[...]}}. */
    TOKENIZE("/tokenize"),
    /** {@code {"tokens":[...]}} → {@code {"content"}}. */
    DETOKENIZE("/detokenize");

    private final String path;

    JsonEndpoint(String path) {
        this.path = path;
    }

    /** Where an OpenAI-compatible or llama.cpp server serves it. */
    public String path() {
        return path;
    }
}
