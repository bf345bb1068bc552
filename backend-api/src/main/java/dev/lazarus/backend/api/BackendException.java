package dev.lazarus.backend.api;

import java.time.Duration;
import java.util.Objects;

/** A typed backend failure; see {@link BackendErrorKind} for what each kind means to the gateway. */
public class BackendException extends RuntimeException {

    private final BackendErrorKind kind;
    private final String param;
    private final Duration retryAfter;
    private final String upstreamType;
    private final String upstreamCode;

    public BackendException(BackendErrorKind kind, String message) {
        this(kind, message, null, null, null);
    }

    public BackendException(BackendErrorKind kind, String message, Throwable cause) {
        this(kind, message, null, null, cause);
    }

    public BackendException(BackendErrorKind kind, String message, String param, Duration retryAfter, Throwable cause) {
        this(kind, message, param, retryAfter, null, null, cause);
    }

    /**
     * @param upstreamType the OpenAI error {@code type} the upstream sent, or null
     * @param upstreamCode the OpenAI error {@code code} the upstream sent ({@code content_policy_violation}), or null
     */
    public BackendException(BackendErrorKind kind, String message, String param, Duration retryAfter,
            String upstreamType, String upstreamCode, Throwable cause) {
        super(message, cause);
        this.kind = Objects.requireNonNull(kind, "kind");
        this.param = param;
        this.retryAfter = retryAfter;
        this.upstreamType = upstreamType;
        this.upstreamCode = upstreamCode;
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

    /** The same failure told in other words ({@code message}, {@code cause}: redacted ones); subclasses keep their facts. */
    public BackendException withMessage(String message, Throwable cause) {
        return new BackendException(kind, message, param, retryAfter, upstreamType, upstreamCode, cause);
    }

    public BackendErrorKind kind() {
        return kind;
    }

    /** The request parameter at fault, or null. */
    public String param() {
        return param;
    }

    /** The error {@code type} an OpenAI-style upstream sent with this failure, or null. */
    public String upstreamType() {
        return upstreamType;
    }

    /** The error {@code code} an OpenAI-style upstream sent with this failure, or null. */
    public String upstreamCode() {
        return upstreamCode;
    }

    /** When to retry, for {@link BackendErrorKind#OVERLOADED}; null when unknown. */
    public Duration retryAfter() {
        return retryAfter;
    }
}
