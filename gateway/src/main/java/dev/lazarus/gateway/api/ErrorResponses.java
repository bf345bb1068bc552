package dev.lazarus.gateway.api;

import dev.lazarus.backend.api.Redactor;
import org.slf4j.Logger;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/** What the error handlers of every API shape share: logging a failure by who is at fault, writing its body. */
public final class ErrorResponses {

    private ErrorResponses() {
    }

    /**
     * Logs a failure that became {@code error}: the gateway's own (500) at ERROR with its stack, a backend's (other
     * 5xx) at WARN in one line, both redacted; an error the gateway answered on purpose, or a client's, not at all.
     */
    public static void log(Logger log, Redactor redactor, ServerHttpRequest request, Throwable failure,
            ApiError error) {
        if (failure instanceof ApiError || !error.status().is5xxServerError()) {
            return;
        }
        if (error.status().value() == 500) {
            log.error("{} {} failed", request.getMethod(), request.getPath(), redactor.redact(failure));
        } else {
            log.warn("{} {}: {}", request.getMethod(), request.getPath(), redactor.redact(failure.getMessage()));
        }
    }

    /** Writes {@code body} as the JSON answer, with {@code status} and the error's headers. */
    public static Mono<Void> write(ServerHttpResponse response, JsonMapper json, ApiError error, int status,
            Object body) {
        response.setStatusCode(HttpStatusCode.valueOf(status));
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        response.getHeaders().addAll(error.headers());
        return response.writeWith(Mono.fromSupplier(() -> {
            byte[] bytes = json.writeValueAsBytes(body);
            DataBuffer buffer = response.bufferFactory().allocateBuffer(bytes.length);
            return buffer.write(bytes);
        }));
    }
}
