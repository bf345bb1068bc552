package dev.lazarus.gateway.api.anthropic;

import dev.lazarus.gateway.api.ApiError;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.http.HttpStatus;

/**
 * The gateway's errors as Anthropic's Messages API words them: {@code {"type":"error","error":{"type","message"}}}
 * with Anthropic's status codes. The request path raises {@link ApiError}s as for every endpoint; only their shape
 * changes here, so a failure means the same on {@code /v1/messages} as on {@code /v1/chat/completions}.
 */
public final class AnthropicErrors {

    /** Anthropic's status for an overloaded service, where the chat endpoints answer 503. */
    static final int OVERLOADED = 529;

    private AnthropicErrors() {}

    /** A request Anthropic would reject: a 400 {@code invalid_request_error}. */
    public static ApiError invalid(String message) {
        return ApiError.invalidRequest(message, null);
    }

    /** The HTTP status Anthropic would answer for the same failure. */
    public static int status(ApiError error) {
        return error.status() == HttpStatus.SERVICE_UNAVAILABLE ? OVERLOADED : error.status().value();
    }

    /** Anthropic's error type for a status. */
    public static String type(int status) {
        return switch (status) {
            case 400, 405, 409, 415, 422 -> "invalid_request_error";
            case 401 -> "authentication_error";
            case 403 -> "permission_error";
            case 404 -> "not_found_error";
            case 413 -> "request_too_large";
            case 429 -> "rate_limit_error";
            case OVERLOADED, 503 -> "overloaded_error";
            case 504 -> "timeout_error";
            default -> status >= 500 ? "api_error" : "invalid_request_error";
        };
    }

    /** The error body: {@code {"type":"error","error":{"type":..., "message":...}}}. */
    public static Map<String, Object> body(ApiError error) {
        Map<String, Object> detail = new LinkedHashMap<>();
        detail.put("type", type(status(error)));
        detail.put("message", error.detail().message());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("type", "error");
        body.put("error", detail);
        return body;
    }
}
