package dev.lazarus.gateway.admin;

import dev.lazarus.gateway.api.ApiError;
import dev.lazarus.gateway.policy.PolicyConflictException;
import dev.lazarus.gateway.policy.PolicyStoreUnavailableException;
import dev.lazarus.gateway.policy.UnknownBackendException;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/** The policy's refusals as OpenAI-format errors: 404 for an unknown backend, 409 for a state conflict,
 * 503 while a shared policy store is unreachable. */
@RestControllerAdvice(basePackageClasses = AdminErrorAdvice.class)
class AdminErrorAdvice {

    @ExceptionHandler(UnknownBackendException.class)
    ResponseEntity<ApiError.Body> unknown(UnknownBackendException e) {
        return write(new ApiError(HttpStatus.NOT_FOUND, "invalid_request_error", "backend_not_found", "id",
                e.getMessage()));
    }

    @ExceptionHandler(PolicyConflictException.class)
    ResponseEntity<ApiError.Body> conflict(PolicyConflictException e) {
        return write(new ApiError(HttpStatus.CONFLICT, "invalid_request_error", e.code(), null, e.getMessage()));
    }

    @ExceptionHandler(PolicyStoreUnavailableException.class)
    ResponseEntity<ApiError.Body> storeAway(PolicyStoreUnavailableException e) {
        return write(new ApiError(HttpStatus.SERVICE_UNAVAILABLE, "server_error", "policy_store_unavailable", null,
                e.getMessage()));
    }

    @ExceptionHandler(ApiError.class)
    ResponseEntity<ApiError.Body> api(ApiError e) {
        return write(e);
    }

    static ResponseEntity<ApiError.Body> write(ApiError error) {
        return ResponseEntity.status(error.status()).headers(error.headers()).body(error.body());
    }
}
