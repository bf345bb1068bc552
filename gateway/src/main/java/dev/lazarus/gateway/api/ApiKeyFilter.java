package dev.lazarus.gateway.api;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * Requires {@code Authorization: Bearer <key>} on {@code /v1/**} when keys are configured; other
 * paths (actuator health, metrics) stay open. Keys are compared as SHA-256 digests with
 * {@link MessageDigest#isEqual}, so the time taken says nothing about how much of a key matched,
 * and every configured key is checked, so it says nothing about which one nearly did.
 */
public final class ApiKeyFilter implements WebFilter {

    private static final String BEARER = "bearer ";

    private final List<byte[]> keyDigests;

    public ApiKeyFilter(List<String> apiKeys) {
        this.keyDigests = apiKeys.stream().map(ApiKeyFilter::digest).toList();
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (keyDigests.isEmpty() || !isApiPath(exchange.getRequest().getPath().pathWithinApplication().value())) {
            return chain.filter(exchange);
        }
        String header = exchange.getRequest().getHeaders().getFirst(HttpHeaders.AUTHORIZATION);
        if (header == null || !header.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            return Mono.error(unauthorized("You didn't provide an API key. Send it in the Authorization header "
                    + "as 'Authorization: Bearer YOUR_KEY'."));
        }
        if (!accepted(header.substring(BEARER.length()).trim())) {
            return Mono.error(unauthorized("Incorrect API key provided."));
        }
        return chain.filter(exchange);
    }

    private boolean accepted(String presented) {
        byte[] candidate = digest(presented);
        boolean match = false;
        for (byte[] key : keyDigests) {
            match |= MessageDigest.isEqual(key, candidate);
        }
        return match;
    }

    private static boolean isApiPath(String path) {
        return path.equals("/v1") || path.startsWith("/v1/");
    }

    private static ApiError unauthorized(String message) {
        return new ApiError(HttpStatus.UNAUTHORIZED, "invalid_request_error", "invalid_api_key", null, message)
                .withHeader(HttpHeaders.WWW_AUTHENTICATE, "Bearer");
    }

    private static byte[] digest(String key) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }
}
