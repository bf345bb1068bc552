package dev.lazarus.gateway.api.anthropic;

import dev.lazarus.backend.api.Redactor;
import dev.lazarus.gateway.api.ApiError;
import dev.lazarus.gateway.api.ErrorMapper;
import dev.lazarus.gateway.api.ErrorResponses;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.Ordered;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import org.springframework.web.util.DisconnectedClientHelper;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * Writes the errors of the Messages endpoints (and of the API key check in front of them) in Anthropic's shape and
 * with Anthropic's status codes ({@link AnthropicErrors}). Runs before the OpenAI error handler and leaves it every
 * other path, a committed response and a client that went away.
 */
public final class AnthropicErrorHandler implements WebExceptionHandler, Ordered {

    /** Before the OpenAI-shaped handler (order -2). */
    static final int ORDER = -3;

    private static final Logger log = LoggerFactory.getLogger(AnthropicErrorHandler.class);
    private static final PathPattern MESSAGES = PathPatternParser.defaultInstance.parse("/v1/messages/**");

    private final ErrorMapper mapper;
    private final JsonMapper json;
    private final Redactor redactor;

    public AnthropicErrorHandler(ErrorMapper mapper, JsonMapper json, Redactor redactor) {
        this.mapper = mapper;
        this.json = json;
        this.redactor = redactor;
    }

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, Throwable failure) {
        ServerHttpRequest request = exchange.getRequest();
        ServerHttpResponse response = exchange.getResponse();
        if (!MESSAGES.matches(request.getPath().pathWithinApplication()) || response.isCommitted()
                || DisconnectedClientHelper.isClientDisconnectedException(failure)) {
            return Mono.error(failure);
        }
        ApiError error = mapper.map(failure, request);
        ErrorResponses.log(log, redactor, request, failure, error);
        return ErrorResponses.write(response, json, error, AnthropicErrors.status(error), AnthropicErrors.body(error));
    }

    @Override
    public int getOrder() {
        return ORDER;
    }
}
