package dev.lazarus.gateway.api;

import dev.lazarus.gateway.routing.ApiEndpoint;
import java.util.ArrayList;
import java.util.List;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * Requires {@code Authorization: Bearer <key>} (or the key in {@code x-api-key}, as Anthropic's clients send it) on
 * {@code /v1/**} and every other client endpoint ({@link #guardedPaths}) when keys are configured; other paths
 * (actuator health, metrics) stay open. How paths and keys are compared: {@link BearerTokens}. A request with an
 * accepted key goes on within that key's limits ({@link KeyLimits}).
 */
public final class ApiKeyFilter implements WebFilter, Ordered {

    /** Before {@link OpenAiEndpointFilter}, which answers the completion endpoints without going further. */
    public static final int ORDER = OpenAiEndpointFilter.ORDER - 1;

    /** Anthropic's header for the key: its SDKs and Claude Code send it instead of a bearer token. */
    static final String API_KEY_HEADER = "x-api-key";

    private final BearerTokens keys;
    private final KeyLimits limits;

    public ApiKeyFilter(List<String> apiKeys) {
        this(apiKeys, KeyLimits.NONE);
    }

    ApiKeyFilter(List<String> apiKeys, KeyLimits limits) {
        this.keys = new BearerTokens(guardedPaths(), apiKeys);
        this.limits = limits;
    }

    /** {@code /v1/**} and the client endpoints outside it ({@code /tokenize}, {@code /rerank}, ...). */
    static List<String> guardedPaths() {
        List<String> paths = new ArrayList<>(List.of("/v1/**"));
        for (ApiEndpoint endpoint : ApiEndpoint.values()) {
            endpoint.paths().stream().filter(p -> !p.startsWith("/v1/")).forEach(paths::add);
        }
        return paths;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (keys.isEmpty() || !keys.guards(exchange.getRequest())) {
            return chain.filter(exchange);
        }
        String presented = BearerTokens.presented(exchange.getRequest());
        if (presented == null) {
            presented = exchange.getRequest().getHeaders().getFirst(API_KEY_HEADER);
        }
        if (presented == null) {
            return Mono.error(unauthorized("You didn't provide an API key. Send it in the Authorization header "
                    + "as 'Authorization: Bearer YOUR_KEY'."));
        }
        if (!keys.accepts(presented)) {
            return Mono.error(unauthorized("Incorrect API key provided."));
        }
        return limits.admit(presented, () -> chain.filter(exchange));
    }

    @Override
    public int getOrder() {
        return ORDER;
    }

    private static ApiError unauthorized(String message) {
        return new ApiError(HttpStatus.UNAUTHORIZED, "invalid_request_error", "invalid_api_key", null, message)
                .withHeader(HttpHeaders.WWW_AUTHENTICATE, "Bearer");
    }
}
