package dev.lazarus.gateway.admin;

import dev.lazarus.gateway.api.ApiError;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * Guards {@code /admin/**} with its own bearer token, separate from the API keys of {@code /v1}
 * (a client that may chat must not be able to promote or roll back). Without a configured token
 * the admin API is off: 403. The comparison is of SHA-256 digests with {@link MessageDigest#isEqual},
 * so its time says nothing about how much of the token matched.
 */
public final class AdminTokenFilter implements WebFilter {

    private static final String BEARER = "bearer ";

    private final byte[] tokenDigest;

    public AdminTokenFilter(AdminProperties properties) {
        this.tokenDigest = properties.enabled() ? digest(properties.token()) : null;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        String path = exchange.getRequest().getPath().pathWithinApplication().value();
        if (!path.equals("/admin") && !path.startsWith("/admin/")) {
            return chain.filter(exchange);
        }
        if (tokenDigest == null) {
            return Mono.error(new ApiError(HttpStatus.FORBIDDEN, "invalid_request_error", "admin_disabled", null,
                    "The admin API is disabled: set lazarus.admin.token to enable it."));
        }
        String header = exchange.getRequest().getHeaders().getFirst(HttpHeaders.AUTHORIZATION);
        if (header == null || !header.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            return Mono.error(unauthorized("You didn't provide the admin token. Send it in the Authorization header "
                    + "as 'Authorization: Bearer ADMIN_TOKEN'."));
        }
        if (!MessageDigest.isEqual(tokenDigest, digest(header.substring(BEARER.length()).trim()))) {
            return Mono.error(unauthorized("Incorrect admin token provided."));
        }
        return chain.filter(exchange);
    }

    private static ApiError unauthorized(String message) {
        return new ApiError(HttpStatus.UNAUTHORIZED, "invalid_request_error", "invalid_api_key", null, message)
                .withHeader(HttpHeaders.WWW_AUTHENTICATE, "Bearer realm=\"lazarus-admin\"");
    }

    private static byte[] digest(String token) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }
}
