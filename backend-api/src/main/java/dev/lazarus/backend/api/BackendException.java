package dev.lazarus.backend.api;

import java.time.Duration;
import java.util.Objects;

/** A typed backend failure; see {@link BackendErrorKind} for what each kind means to the gateway. */
public class BackendException extends RuntimeException {

    private final BackendErrorKind kind;
    private final String param;
    private final Duration retryAfter;

    public BackendException(BackendErrorKind kind, String message) {
        this(kind, message, null, null, null);
    }

    public BackendException(BackendErrorKind kind, String message, Throwable cause) {
        this(kind, message, null, null, cause);
    }

    public BackendException(BackendErrorKind kind, String message, String param, Duration retryAfter, Throwable cause) {
        super(message, cause);
        this.kind = Objects.requireNonNull(kind, "kind");
        this.param = param;
        this.retryAfter = retryAfter;
    }

    public static BackendException invalidRequest(String message, String param) {
        return new BackendException(BackendErrorKind.INVALID_REQUEST, message, param, null, null);
    }

    public static BackendException contextLengthExceeded(String message) {
        return new BackendException(BackendErrorKind.CONTEXT_LENGTH_EXCEEDED, message, "messages", null, null);
    }

    public static BackendException unavailable(String message) {
        return new BackendException(BackendErrorKind.UNAVAILABLE, message);
    }

    public static BackendException overloaded(String message, Duration retryAfter) {
        return new BackendException(BackendErrorKind.OVERLOADED, message, null, retryAfter, null);
    }

    public static BackendException timeout(String message) {
        return new BackendException(BackendErrorKind.TIMEOUT, message);
    }

    public BackendErrorKind kind() {
        return kind;
    }

    /** The request parameter at fault, or null. */
    public String param() {
        return param;
    }

    /** When to retry, for {@link BackendErrorKind#OVERLOADED}; null when unknown. */
    public Duration retryAfter() {
        return retryAfter;
    }
}
