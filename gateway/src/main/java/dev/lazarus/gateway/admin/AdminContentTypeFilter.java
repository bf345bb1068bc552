package dev.lazarus.gateway.admin;

import dev.lazarus.gateway.api.JsonContentType;
import java.util.Set;
import org.springframework.core.Ordered;
import org.springframework.http.HttpMethod;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import reactor.core.publisher.Mono;

/**
 * Admin bodies follow the same Content-Type rule as {@code /v1} ({@link JsonContentType}): the
 * controllers take the body as text to name the field at fault in a 400, and text is accepted in
 * any media type, so a {@code text/plain} body used to be parsed as JSON anyway. Runs after the
 * token check: a caller without the token learns nothing about the body's rules.
 */
final class AdminContentTypeFilter implements WebFilter, Ordered {

    static final int ORDER = AdminTokenFilter.ORDER + 1;

    private static final PathPattern ADMIN = PathPatternParser.defaultInstance.parse("/admin/**");
    private static final Set<HttpMethod> WITH_BODY = Set.of(HttpMethod.POST, HttpMethod.PUT, HttpMethod.PATCH);

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (WITH_BODY.contains(exchange.getRequest().getMethod())
                && ADMIN.matches(exchange.getRequest().getPath().pathWithinApplication())) {
            try {
                JsonContentType.require(exchange.getRequest().getHeaders());
            } catch (RuntimeException unsupported) {
                return Mono.error(unsupported);
            }
        }
        return chain.filter(exchange);
    }

    @Override
    public int getOrder() {
        return ORDER;
    }
}
