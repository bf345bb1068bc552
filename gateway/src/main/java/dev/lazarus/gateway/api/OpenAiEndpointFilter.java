package dev.lazarus.gateway.api;

import dev.lazarus.gateway.routing.ApiEndpoint;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.core.Ordered;
import org.springframework.http.HttpMethod;
import org.springframework.http.server.PathContainer;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import reactor.core.publisher.Mono;

/**
 * Hands {@code POST /v1/chat/completions} and {@code POST /v1/completions} to the {@link OpenAiController}, and the
 * endpoints answered by one JSON document (embeddings, rerank, tokenize) to the {@link JsonEndpointsController}, as a web
 * filter, after the API keys and every other filter that acts on {@code /v1}, instead of through Spring's
 * {@code DispatcherHandler}:
 * its per-request walk over every handler mapping (actuator's, the annotated controllers', the functional routes),
 * the handler adapter and the result handling came to some 8 % of a relayed non-streaming request's CPU
 * (docs/benchmarks.md#relay-profile). Paths match as routes do ({@link PathPattern}: segments decoded, matrix parameters
 * dropped). Anything else goes on to the dispatcher, another method on these paths included (a 405 naming POST:
 * {@link ApiConfiguration#openAiRoutes}). Errors travel up the filter chain to the same exception handlers.
 */
public final class OpenAiEndpointFilter implements WebFilter, Ordered {

    /**
     * After every filter that acts on {@code /v1} (they are ordered before it, see ApiKeyFilter#ORDER); only the admin
     * API's two filters come after it, which act on {@code /admin/**} and the detailed health group alone: each filter
     * a request passes costs it a deferred subscription and a checkpoint in Spring's filter chain, on the way in and
     * on the answer's way out (docs/benchmarks.md#relay-profile).
     */
    public static final int ORDER = Ordered.LOWEST_PRECEDENCE - 20;

    private static final PathPattern CHAT = PathPatternParser.defaultInstance.parse(OpenAiController.CHAT_PATH);
    private static final PathPattern COMPLETIONS = PathPatternParser.defaultInstance.parse(OpenAiController.COMPLETIONS_PATH);

    /** The endpoints answered by one JSON document, each path with its endpoint. */
    private static final Map<PathPattern, ApiEndpoint> JSON = jsonPaths();

    private final OpenAiController controller;
    private final JsonEndpointsController json;

    public OpenAiEndpointFilter(OpenAiController controller, JsonEndpointsController json) {
        this.controller = controller;
        this.json = json;
    }

    static List<ApiEndpoint> jsonEndpoints() {
        return Arrays.stream(ApiEndpoint.values()).filter(e -> e.jsonEndpoint() != null).toList();
    }

    private static Map<PathPattern, ApiEndpoint> jsonPaths() {
        Map<PathPattern, ApiEndpoint> paths = new LinkedHashMap<>();
        jsonEndpoints().forEach(e -> e.paths().forEach(p -> paths.put(PathPatternParser.defaultInstance.parse(p), e)));
        return paths;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (exchange.getRequest().getMethod() == HttpMethod.POST) {
            PathContainer path = exchange.getRequest().getPath().pathWithinApplication();
            if (CHAT.matches(path)) {
                return controller.chatCompletions(exchange);
            }
            if (COMPLETIONS.matches(path)) {
                return controller.completions(exchange);
            }
            for (Map.Entry<PathPattern, ApiEndpoint> endpoint : JSON.entrySet()) {
                if (endpoint.getKey().matches(path)) {
                    return json.serve(endpoint.getValue(), exchange);
                }
            }
        }
        return chain.filter(exchange);
    }

    @Override
    public int getOrder() {
        return ORDER;
    }
}
