package dev.lazarus.gateway.metrics;

import dev.lazarus.gateway.api.ApiError;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * What the gateway adds in front of Spring Boot Actuator under {@code /actuator}:
 * <ul>
 *   <li>a path with a {@code .} or {@code ..} segment, an empty one, or an encoded separator is a 404:
 *       the health endpoint took {@code /actuator/health/x/..} for a component path and failed with a
 *       500 ({@code 'contributor' must not be null}); nothing under {@code /actuator} needs such a path;</li>
 *   <li>an error answer without a body (an unknown health component, an unknown metric) gets the
 *       OpenAI error body that every other error of the gateway has.</li>
 * </ul>
 */
public final class ActuatorRequestFilter implements WebFilter, Ordered {

    /** Early: before the token checks, so a tricky path never reaches a guard or an endpoint. */
    static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 100;

    private static final PathPattern ACTUATOR = PathPatternParser.defaultInstance.parse("/actuator/**");

    private final JsonMapper json;

    public ActuatorRequestFilter(JsonMapper json) {
        this.json = json;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        ServerHttpRequest request = exchange.getRequest();
        PathContainer path = request.getPath().pathWithinApplication();
        if (!ACTUATOR.matches(path)) {
            return chain.filter(exchange);
        }
        if (!isPlain(path)) {
            return Mono.error(notFound(request));
        }
        return chain.filter(exchange.mutate().response(new ErrorBodies(exchange.getResponse(), request)).build());
    }

    /**
     * Every segment a name: no dot segments, no empty segments, no encoded slash or backslash. An empty
     * segment shows as two separators in a row ({@code /actuator/health//details} reached the detailed
     * group past the token check, whose pattern does not match it, while actuator's mapping did).
     */
    static boolean isPlain(PathContainer path) {
        int segments = 0;
        boolean afterSeparator = false;
        for (PathContainer.Element element : path.elements()) {
            if (element instanceof PathContainer.Separator) {
                if (afterSeparator) {
                    return false;
                }
                afterSeparator = true;
            } else if (element instanceof PathContainer.PathSegment segment) {
                afterSeparator = false;
                String value = segment.valueToMatch();
                String raw = segment.value().toLowerCase(java.util.Locale.ROOT);
                if (value.isEmpty() || value.equals(".") || value.equals("..") || raw.contains("%2f")
                        || raw.contains("%5c") || value.indexOf('\\') >= 0) {
                    return false;
                }
                segments++;
            }
        }
        // "/actuator/" ends in a separator with nothing after it: an empty last segment
        return segments > 0 && !path.value().endsWith("/");
    }

    private static ApiError notFound(ServerHttpRequest request) {
        return new ApiError(HttpStatus.NOT_FOUND, "invalid_request_error", "unknown_url", null,
                "Invalid URL (" + request.getMethod() + " " + request.getPath().value() + ")");
    }

    @Override
    public int getOrder() {
        return ORDER;
    }

    /** Writes the OpenAI error body when an endpoint completes an error answer with none. */
    private final class ErrorBodies extends ServerHttpResponseDecorator {

        private final ServerHttpRequest request;

        ErrorBodies(ServerHttpResponse delegate, ServerHttpRequest request) {
            super(delegate);
            this.request = request;
        }

        @Override
        public Mono<Void> setComplete() {
            HttpStatusCode status = getStatusCode();
            if (status == null || !status.isError() || isCommitted()) {
                return super.setComplete();
            }
            ApiError error = status.value() == 404 ? notFound(request)
                    : new ApiError(HttpStatus.valueOf(status.value()),
                            status.is5xxServerError() ? "server_error" : "invalid_request_error", null, null,
                            HttpStatus.valueOf(status.value()).getReasonPhrase());
            byte[] bytes = json.writeValueAsBytes(error.body());
            getHeaders().setContentType(MediaType.APPLICATION_JSON);
            getHeaders().setContentLength(bytes.length);
            return getDelegate().writeWith(Mono.fromSupplier(() -> {
                DataBuffer buffer = bufferFactory().allocateBuffer(bytes.length);
                return buffer.write(bytes);
            }));
        }
    }

}
