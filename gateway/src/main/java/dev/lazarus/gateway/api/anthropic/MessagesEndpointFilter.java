package dev.lazarus.gateway.api.anthropic;

import dev.lazarus.gateway.api.OpenAiEndpointFilter;
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
 * Hands {@code POST /v1/messages} and {@code POST /v1/messages/count_tokens} to the {@link MessagesController} as
 * the chat endpoints are handed to theirs ({@link OpenAiEndpointFilter}): after the API keys and every filter that
 * acts on {@code /v1}, writing the answer straight to the exchange.
 */
public final class MessagesEndpointFilter implements WebFilter, Ordered {

    static final int ORDER = OpenAiEndpointFilter.ORDER + 1;

    private static final PathPattern MESSAGES =
            PathPatternParser.defaultInstance.parse(MessagesController.MESSAGES_PATH);
    private static final PathPattern COUNT_TOKENS =
            PathPatternParser.defaultInstance.parse(MessagesController.COUNT_TOKENS_PATH);

    private final MessagesController controller;

    public MessagesEndpointFilter(MessagesController controller) {
        this.controller = controller;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (exchange.getRequest().getMethod() == HttpMethod.POST) {
            PathContainer path = exchange.getRequest().getPath().pathWithinApplication();
            if (MESSAGES.matches(path)) {
                return controller.messages(exchange);
            }
            if (COUNT_TOKENS.matches(path)) {
                return controller.countTokens(exchange);
            }
        }
        return chain.filter(exchange);
    }

    @Override
    public int getOrder() {
        return ORDER;
    }
}
