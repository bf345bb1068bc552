package dev.lazarus.gateway.api;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.annotation.Order;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * Writes every error that reaches the web layer as an OpenAI error body. Runs before Spring
 * Boot's own handler (order -1), which would answer with its HTML/JSON error page.
 */
@Component
@Order(-2)
public class OpenAiErrorHandler implements WebExceptionHandler {

    private static final Logger log = LoggerFactory.getLogger(OpenAiErrorHandler.class);

    private final ErrorMapper mapper;
    private final JsonMapper json;

    public OpenAiErrorHandler(ErrorMapper mapper, JsonMapper json) {
        this.mapper = mapper;
        this.json = json;
    }

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, Throwable failure) {
        ServerHttpResponse response = exchange.getResponse();
        if (response.isCommitted()) {
            return Mono.error(failure);
        }
        ApiError error = mapper.map(failure, exchange.getRequest());
        if (error.status().is5xxServerError() && !(failure instanceof ApiError)) {
            if (error.status().value() == 500) {
                log.error("{} {} failed", exchange.getRequest().getMethod(), exchange.getRequest().getPath(), failure);
            } else {
                log.warn("{} {}: {}", exchange.getRequest().getMethod(), exchange.getRequest().getPath(),
                        failure.getMessage());
            }
        }
        response.setStatusCode(error.status());
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        response.getHeaders().addAll(error.headers());
        return response.writeWith(Mono.fromSupplier(() -> {
            byte[] bytes = json.writeValueAsBytes(error.body());
            DataBuffer buffer = response.bufferFactory().allocateBuffer(bytes.length);
            return buffer.write(bytes);
        }));
    }
}
