package dev.lazarus.gateway.admin;

import dev.lazarus.gateway.api.ApiError;
import dev.lazarus.gateway.api.BearerTokens;
import java.util.List;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * Guards {@code /admin/**} and the detailed health group with its own bearer token, separate from the API keys of {@code /v1}
 * (a client that may chat must not be able to promote or roll back). Without a configured token
 * the admin API is off: 403. How paths and the token are compared: {@link BearerTokens}.
 */
public final class AdminTokenFilter implements WebFilter, Ordered {

    /**
     * Late among the web filters (after observation and metrics), after the OpenAI endpoint filter too (which never
     * passes the admin paths on), but explicit: others order themselves after it.
     */
    static final int ORDER = Ordered.LOWEST_PRECEDENCE - 10;

    /**
     * The health group with every detail; anonymous callers of {@code /actuator/health} see the
     * status only (application.yml).
     */
    static final String DETAILED_HEALTH = "/actuator/health/details/**";

    private final BearerTokens token;
    private final FailedAdminLogins failures;
    private final AdminLoginThrottle throttle;
    private final ClientAddress clients;

    AdminTokenFilter(AdminProperties properties, FailedAdminLogins failures, AdminLoginThrottle throttle,
            ClientAddress clients) {
        this.token = new BearerTokens(List.of("/admin/**", DETAILED_HEALTH),
                properties.enabled() ? List.of(properties.token()) : List.of());
        this.failures = failures;
        this.throttle = throttle;
        this.clients = clients;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (!token.guards(exchange.getRequest())) {
            return chain.filter(exchange);
        }
        if (token.isEmpty()) {
            return Mono.error(new ApiError(HttpStatus.FORBIDDEN, "invalid_request_error", "admin_disabled", null,
                    "The admin API is disabled: set lazarus.admin.token to enable it."));
        }
        String from = clients.of(exchange.getRequest());
        // Before the token is looked at: a waiting guesser learns nothing, not even a right guess.
        ApiError refusal = throttle.refusal(from, "admin logins");
        if (refusal != null) {
            return Mono.error(refusal);
        }
        String presented = BearerTokens.presented(exchange.getRequest());
        if (presented == null) {
            throttle.failed(from);
            return failures.failed(exchange.getRequest(), from, "missing token").then(Mono.error(unauthorized(
                    "You didn't provide the admin token. Send it in the Authorization header "
                            + "as 'Authorization: Bearer ADMIN_TOKEN'.")));
        }
        if (!token.accepts(presented)) {
            throttle.failed(from);
            return failures.failed(exchange.getRequest(), from, "wrong token")
                    .then(Mono.error(unauthorized("Incorrect admin token provided.")));
        }
        throttle.succeeded(from);
        return chain.filter(exchange);
    }

    @Override
    public int getOrder() {
        return ORDER;
    }

    private static ApiError unauthorized(String message) {
        return new ApiError(HttpStatus.UNAUTHORIZED, "invalid_request_error", "invalid_api_key", null, message)
                .withHeader(HttpHeaders.WWW_AUTHENTICATE, "Bearer realm=\"lazarus-admin\"");
    }
}
