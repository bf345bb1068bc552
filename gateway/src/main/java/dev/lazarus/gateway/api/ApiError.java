package dev.lazarus.gateway.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Duration;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;

/**
 * An error as the client sees it: HTTP status, the OpenAI error body and the headers that go with
 * it. Thrown anywhere in the request path; {@link OpenAiErrorHandler} writes it.
 */
public final class ApiError extends RuntimeException {

    /** {@code {"error": {...}}}: OpenAI's envelope. */
    public record Body(Detail error) {}

    /**
     * OpenAI sends all four fields, null when not applicable. A prompt over the context also carries
     * llama-server's {@code n_prompt_tokens} and {@code n_ctx}, which clients of llama-server read.
     */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record Detail(String message, String type, String param, String code,
            @JsonProperty("n_prompt_tokens") @JsonInclude(JsonInclude.Include.NON_NULL) Integer promptTokens,
            @JsonProperty("n_ctx") @JsonInclude(JsonInclude.Include.NON_NULL) Integer contextSize) {

        public Detail(String message, String type, String param, String code) {
            this(message, type, param, code, null, null);
        }
    }

    private final HttpStatus status;
    private final Detail detail;
    private final HttpHeaders headers;

    public ApiError(HttpStatus status, String type, String code, String param, String message) {
        this(status, new Detail(message, type, param, code), new HttpHeaders());
    }

    private ApiError(HttpStatus status, Detail detail, HttpHeaders headers) {
        super(detail.message(), null, false, false);
        this.status = status;
        this.detail = detail;
        this.headers = headers;
    }

    public static ApiError invalidRequest(String message, String param) {
        return new ApiError(HttpStatus.BAD_REQUEST, "invalid_request_error", null, param, message);
    }

    public static ApiError invalidValue(String message, String param) {
        return new ApiError(HttpStatus.BAD_REQUEST, "invalid_request_error", "invalid_value", param, message);
    }

    /** A field of the wrong JSON type, worded as OpenAI words it; {@code reason} is "expected an integer, ...". */
    public static ApiError invalidType(String param, String reason) {
        return new ApiError(HttpStatus.BAD_REQUEST, "invalid_request_error", "invalid_type", param,
                "Invalid type for '" + param + "': " + reason + ".");
    }

    /** The same error with llama-server's {@code n_prompt_tokens} and {@code n_ctx}. */
    public ApiError withContextSizes(int promptTokens, int contextSize) {
        return new ApiError(status, new Detail(detail.message(), detail.type(), detail.param(), detail.code(),
                promptTokens, contextSize), headers);
    }

    /** Adds a header (Retry-After, Allow, WWW-Authenticate); returns this for chaining. */
    public ApiError withHeader(String name, String value) {
        headers.add(name, value);
        return this;
    }

    public ApiError withRetryAfter(Duration retryAfter) {
        if (retryAfter == null) {
            return this;
        }
        // Retry-After is whole seconds; round up so a client never comes back too early.
        long seconds = Math.max(1, (retryAfter.toMillis() + 999) / 1000);
        return withHeader(HttpHeaders.RETRY_AFTER, Long.toString(seconds));
    }

    public HttpStatus status() {
        return status;
    }

    public Body body() {
        return new Body(detail);
    }

    public Detail detail() {
        return detail;
    }

    public HttpHeaders headers() {
        return headers;
    }
}
