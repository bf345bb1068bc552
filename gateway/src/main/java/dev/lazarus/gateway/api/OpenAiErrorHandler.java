package dev.lazarus.gateway.api;

import dev.lazarus.backend.api.Redactor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import org.springframework.web.util.DisconnectedClientHelper;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * Writes every error that reaches the web layer as an OpenAI error body. Runs before Spring
 * Boot's own handler (order -1), which would answer with its HTML/JSON error page.
 *
 * <p>Logged by who is at fault: the gateway's own failures (500) at ERROR with their stack, a
 * backend's (other 5xx) at WARN in one line, a client that went away mid-request (its body cut
 * short, its connection reset) at DEBUG. Every message passes the {@link Redactor} first.
 */
@Component
@Order(-2)
public class OpenAiErrorHandler implements WebExceptionHandler {

    private static final Logger log = LoggerFactory.getLogger(OpenAiErrorHandler.class);

    private final ErrorMapper mapper;
    private final JsonMapper json;
    private final Redactor redactor;

    public OpenAiErrorHandler(ErrorMapper mapper, JsonMapper json, Redactor redactor) {
        this.mapper = mapper;
        this.json = json;
        this.redactor = redactor;
    }

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, Throwable failure) {
        ServerHttpRequest request = exchange.getRequest();
        ServerHttpResponse response = exchange.getResponse();
        if (DisconnectedClientHelper.isClientDisconnectedException(failure)) {
            log.debug("{} {}: the client went away ({})", request.getMethod(), request.getPath(),
                    redactor.redact(failure.toString()));
            // Answered in case the connection is only half closed; nobody may be reading.
            return response.isCommitted() ? Mono.empty()
                    : write(response, new ApiError(HttpStatus.BAD_REQUEST, "invalid_request_error", "incomplete_request",
                            null, "The request was not received completely.")).onErrorResume(e -> Mono.empty());
        }
        if (response.isCommitted()) {
            // The status went out: only closing the connection tells the client the answer is cut.
            log.warn("{} {} failed after the response had begun: {}", request.getMethod(), request.getPath(),
                    redactor.redact(failure.toString()));
            return Mono.error(redactor.redact(failure));
        }
        ApiError error = mapper.map(failure, request);
        ErrorResponses.log(log, redactor, request, failure, error);
        return write(response, error);
    }

    private Mono<Void> write(ServerHttpResponse response, ApiError error) {
        return ErrorResponses.write(response, json, error, error.status().value(), error.body());
    }
}
