package dev.lazarus.gateway.admin;

import dev.lazarus.gateway.api.ApiError;
import dev.lazarus.gateway.api.BearerTokens;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * Guards {@code /actuator/prometheus} with {@code lazarus.metrics.token}, else with the admin token; with
 * neither the page stays open and the start says so. Failures count against the admin login throttle: the
 * page must not be a way around it when it takes the admin token.
 */
final class MetricsTokenFilter implements WebFilter, Ordered {

    private static final Logger log = LoggerFactory.getLogger(MetricsTokenFilter.class);
    static final String PROMETHEUS = "/actuator/prometheus";

    private final BearerTokens token;
    private final AdminLoginThrottle throttle;
    private final ClientAddress clients;

    MetricsTokenFilter(MetricsProperties metrics, AdminProperties admin, AdminLoginThrottle throttle,
            ClientAddress clients) {
        List<String> tokens = metrics.hasToken() ? List.of(metrics.token())
                : admin.enabled() ? List.of(admin.token()) : List.of();
        if (tokens.isEmpty()) {
            log.warn("{} is open to anyone who reaches this port: set lazarus.metrics.token (or lazarus.admin.token) "
                    + "and give it to the scraper", PROMETHEUS);
        }
        this.token = new BearerTokens(List.of(PROMETHEUS), tokens);
        this.throttle = throttle;
        this.clients = clients;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (token.isEmpty() || !token.guards(exchange.getRequest())) {
            return chain.filter(exchange);
        }
        String from = clients.of(exchange.getRequest());
        ApiError refusal = throttle.refusal(from, "logins");
        if (refusal != null) {
            return Mono.error(refusal);
        }
        String presented = BearerTokens.presented(exchange.getRequest());
        if (presented == null || !token.accepts(presented)) {
            throttle.failed(from);
            return Mono.error(new ApiError(HttpStatus.UNAUTHORIZED, "invalid_request_error", "invalid_api_key", null,
                    "The metrics need a token: send 'Authorization: Bearer METRICS_TOKEN' (lazarus.metrics.token, "
                            + "else the admin token).")
                    .withHeader(HttpHeaders.WWW_AUTHENTICATE, "Bearer realm=\"lazarus-metrics\""));
        }
        throttle.succeeded(from);
        return chain.filter(exchange);
    }

    @Override
    public int getOrder() {
        return AdminTokenFilter.ORDER;
    }
}
