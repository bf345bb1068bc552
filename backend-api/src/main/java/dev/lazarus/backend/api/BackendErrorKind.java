package dev.lazarus.backend.api;

/**
 * What went wrong in a backend call, in terms the gateway can act on: the HTTP status and OpenAI
 * error {@code type}/{@code code} a client sees, whether another backend could serve the same
 * request, and whether the failure counts against the backend's health.
 */
public enum BackendErrorKind {
    /** The request itself is wrong: answer the client at once, do not fail over. */
    INVALID_REQUEST(400, "invalid_request_error", null, false, false),
    /** The prompt does not fit this backend's context; another backend may have a larger one. */
    CONTEXT_LENGTH_EXCEEDED(400, "invalid_request_error", "context_length_exceeded", true, false),
    /** This backend does not serve the model (not loaded, not configured). */
    MODEL_NOT_FOUND(404, "invalid_request_error", "model_not_found", true, false),
    /** Too busy now; {@link BackendException#retryAfter()} says when to come back if known. */
    OVERLOADED(429, "rate_limit_error", "rate_limit_exceeded", true, false),
    /** Not serving: down, loading, refusing connections. */
    UNAVAILABLE(503, "server_error", "service_unavailable", true, true),
    /** No first token, or no next token, within the configured time. */
    TIMEOUT(504, "server_error", "timeout", true, true),
    /** The upstream answered with something broken (5xx, malformed stream, reset connection). */
    UPSTREAM(502, "server_error", "bad_gateway", true, true),
    /** A fault inside the backend itself (engine error, out of memory). */
    INTERNAL(500, "server_error", "internal_error", true, true);

    private final int httpStatus;
    private final String type;
    private final String code;
    private final boolean tryNextBackend;
    private final boolean backendFault;

    BackendErrorKind(int httpStatus, String type, String code, boolean tryNextBackend, boolean backendFault) {
        this.httpStatus = httpStatus;
        this.type = type;
        this.code = code;
        this.tryNextBackend = tryNextBackend;
        this.backendFault = backendFault;
    }

    public int httpStatus() {
        return httpStatus;
    }

    /** OpenAI error {@code type}. */
    public String type() {
        return type;
    }

    /** OpenAI error {@code code}, or null. */
    public String code() {
        return code;
    }

    /** Whether another backend in the route may serve the same request. */
    public boolean tryNextBackend() {
        return tryNextBackend;
    }

    /** Whether this counts as the backend's failure (breakers, health), as opposed to the request's. */
    public boolean backendFault() {
        return backendFault;
    }
}
