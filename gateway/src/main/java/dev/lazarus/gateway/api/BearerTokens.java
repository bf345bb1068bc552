package dev.lazarus.gateway.api;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collection;
import java.util.List;
import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * What the gateway's two bearer-token guards share ({@link ApiKeyFilter} for {@code /v1},
 * the admin token filter for {@code /admin}): which requests a guard covers, and whether a
 * presented token is one of its secrets.
 *
 * <p>Paths are matched as the handler mappings match them, with a {@link PathPattern}: segments
 * percent-decoded and stripped of {@code ;matrix} parameters. Comparing the raw path instead let
 * {@code /%61dmin/backends} or {@code /v1;x/models} reach the controllers without a token.
 *
 * <p>Secrets are kept and compared as SHA-256 digests with {@link MessageDigest#isEqual}, and every
 * secret is checked, so the time taken says nothing about how much of a secret matched, or which.
 */
public final class BearerTokens {

    private static final String BEARER = "bearer ";
    /**
     * A MessageDigest is not thread-safe, and looking one up (the provider search) per request showed in
     * profiles: one per thread, the few event loops that check tokens.
     */
    private static final ThreadLocal<MessageDigest> SHA_256 = ThreadLocal.withInitial(BearerTokens::sha256);

    private final List<PathPattern> guarded;
    private final List<byte[]> digests;

    /** @param pathPattern the paths guarded, e.g. {@code /v1/**} (which covers {@code /v1} itself) */
    public BearerTokens(String pathPattern, Collection<String> secrets) {
        this(List.of(pathPattern), secrets);
    }

    public BearerTokens(List<String> pathPatterns, Collection<String> secrets) {
        this.guarded = pathPatterns.stream().map(PathPatternParser.defaultInstance::parse).toList();
        this.digests = secrets.stream().map(BearerTokens::digest).toList();
    }

    public boolean guards(ServerHttpRequest request) {
        var path = request.getPath().pathWithinApplication();
        for (PathPattern pattern : guarded) { // a loop, not a stream: every request passes here twice
            if (pattern.matches(path)) {
                return true;
            }
        }
        return false;
    }

    /** No secret configured: nothing can be accepted. */
    public boolean isEmpty() {
        return digests.isEmpty();
    }

    /** The token of the request's {@code Authorization: Bearer} header; null without one. */
    public static String presented(ServerHttpRequest request) {
        String header = request.getHeaders().getFirst(HttpHeaders.AUTHORIZATION);
        if (header == null || !header.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            return null;
        }
        return header.substring(BEARER.length()).trim();
    }

    public boolean accepts(String token) {
        byte[] candidate = digest(token);
        boolean match = false;
        for (byte[] secret : digests) {
            match |= MessageDigest.isEqual(secret, candidate);
        }
        return match;
    }

    private static byte[] digest(String secret) {
        // digest() ends with a reset: the thread's instance is clean for its next use
        return SHA_256.get().digest(secret.getBytes(StandardCharsets.UTF_8));
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }
}
