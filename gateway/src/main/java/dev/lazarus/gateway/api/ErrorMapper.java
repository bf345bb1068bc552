package dev.lazarus.gateway.api;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.ContextLengthExceededException;
import dev.lazarus.gateway.routing.AllBackendsFailedException;
import dev.lazarus.gateway.routing.LeftOutByPolicy;
import java.time.Duration;
import java.util.stream.Collectors;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.MethodNotAllowedException;
import org.springframework.web.server.PayloadTooLargeException;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebInputException;
import org.springframework.web.server.UnsupportedMediaTypeStatusException;

/** Turns any failure of the request path into the {@link ApiError} the client gets. */
public final class ErrorMapper {

    private final Duration defaultRetryAfter;

    public ErrorMapper(Duration defaultRetryAfter) {
        this.defaultRetryAfter = defaultRetryAfter;
    }

    public ApiError map(Throwable error, ServerHttpRequest request) {
        return switch (error) {
            case ApiError e -> e;
            case BackendException e -> fromBackend(e);
            case AllBackendsFailedException e -> allFailed(e);
            case DataBufferLimitException e -> tooLarge();
            case PayloadTooLargeException e -> tooLarge();
            case MethodNotAllowedException e -> new ApiError(HttpStatus.METHOD_NOT_ALLOWED, "invalid_request_error",
                    "method_not_allowed", null,
                    "Method " + request.getMethod() + " is not allowed for " + request.getPath().value() + ".")
                    .withHeader(HttpHeaders.ALLOW, e.getSupportedMethods().stream()
                            .map(HttpMethod::name).sorted().collect(Collectors.joining(", ")));
            case UnsupportedMediaTypeStatusException e -> unsupportedMediaType(String.valueOf(e.getContentType()));
            case ServerWebInputException e -> ApiError.invalidRequest(
                    e.getReason() != null ? e.getReason() : "Invalid request.", null);
            case ResponseStatusException e when e.getStatusCode().value() == 404 -> new ApiError(HttpStatus.NOT_FOUND,
                    "invalid_request_error", "unknown_url", null,
                    "Invalid URL (" + request.getMethod() + " " + request.getPath().value() + ")");
            case ResponseStatusException e -> new ApiError(HttpStatus.valueOf(e.getStatusCode().value()),
                    e.getStatusCode().is5xxServerError() ? "server_error" : "invalid_request_error", null, null,
                    e.getReason() != null ? e.getReason() : HttpStatus.valueOf(e.getStatusCode().value()).getReasonPhrase());
            default -> new ApiError(HttpStatus.INTERNAL_SERVER_ERROR, "server_error", "internal_error", null,
                    "The server had an error while processing your request.");
        };
    }

    static ApiError tooLarge() {
        return new ApiError(HttpStatus.CONTENT_TOO_LARGE, "invalid_request_error", "request_too_large", null,
                "The request body is larger than this gateway accepts.");
    }

    static ApiError unsupportedMediaType(String contentType) {
        return new ApiError(HttpStatus.UNSUPPORTED_MEDIA_TYPE, "invalid_request_error", "unsupported_media_type", null,
                "Unsupported Content-Type '" + contentType + "': send the request body as application/json.");
    }

    private static ApiError fromBackend(BackendException e) {
        BackendErrorKind kind = e.kind();
        // About the client's own request: the upstream's type and code are what a client acts on
        // (content_policy_violation is not a bad parameter); a backend's own fault keeps ours.
        boolean requestSide = !kind.backendFault() && kind != BackendErrorKind.OVERLOADED;
        String type = requestSide && e.upstreamType() != null ? e.upstreamType() : kind.type();
        String code = requestSide && e.upstreamCode() != null ? e.upstreamCode() : kind.code();
        ApiError error = new ApiError(HttpStatus.valueOf(kind.httpStatus()), type, code, e.param(),
                clientMessage(e));
        if (e instanceof ContextLengthExceededException c) {
            return error.withContextSizes(c.promptTokens(), c.contextSize());
        }
        return kind == BackendErrorKind.OVERLOADED ? error.withRetryAfter(e.retryAfter()) : error;
    }

    /**
     * A backend's own message goes to the client only when it is about the client's request (a
     * context overflow, a bad parameter). A backend's failure is described in general terms: its
     * message names upstream addresses, connection errors and server output, which are the
     * operator's business (they are in the log and the admin API), not the API client's.
     */
    private static String clientMessage(BackendException e) {
        return switch (e.kind()) {
            case INVALID_REQUEST, CONTEXT_LENGTH_EXCEEDED, MODEL_NOT_FOUND -> e.getMessage();
            case OVERLOADED -> "The backend serving this model is overloaded. Please retry later.";
            case UNAVAILABLE -> "The backend serving this model is unavailable. Please retry later.";
            case TIMEOUT -> "The backend serving this model did not answer in time.";
            case UPSTREAM -> "The backend serving this model failed while answering.";
            case INTERNAL -> "The server had an error while processing your request.";
        };
    }

    private ApiError allFailed(AllBackendsFailedException e) {
        BackendErrorKind shared = e.commonRequestKind();
        if (shared != null) {
            BackendException last = e.failures().getLast().cause();
            if (last instanceof ContextLengthExceededException) {
                return fromBackend(last); // with its sizes; a request error has no retry time to merge
            }
            return fromBackend(new BackendException(shared, last.getMessage(), last.param(), e.retryAfter(),
                    last.upstreamType(), last.upstreamCode(), null));
        }
        Duration retryAfter = e.earliestRetry(defaultRetryAfter);
        return new ApiError(HttpStatus.SERVICE_UNAVAILABLE, "server_error", "service_unavailable", null,
                "No backend is available for model '" + e.model() + "'; tried " + e.failures().stream()
                        .map(f -> f.backendId() + " (" + (f.cause() instanceof LeftOutByPolicy left ? left.reason()
                                : f.cause().kind().name().toLowerCase(java.util.Locale.ROOT)) + ")")
                        .collect(Collectors.joining(", ")) + ". Please retry later.")
                .withRetryAfter(retryAfter);
    }
}
