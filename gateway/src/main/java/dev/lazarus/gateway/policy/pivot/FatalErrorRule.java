package dev.lazarus.gateway.policy.pivot;

import dev.lazarus.backend.api.BackendException;
import dev.lazarus.gateway.policy.Actor;
import dev.lazarus.gateway.policy.PolicyEngine;
import dev.lazarus.gateway.policy.PolicyStoreUnavailableException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.regex.Pattern;

/**
 * Rolls a promoted candidate back at its first fatal error: a crash, out-of-memory, a CUDA or
 * kernel error, recognised by configurable patterns in the error's message (and its causes').
 * Errors that are the request's own fault (a bad request, a prompt too long) are never fatal.
 */
public final class FatalErrorRule implements BiConsumer<String, Throwable> {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(FatalErrorRule.class);
    private static final int MAX_MESSAGE = 300;

    private final PolicyEngine engine;
    private final List<Pattern> patterns;

    public FatalErrorRule(PolicyEngine engine, List<String> patterns) {
        this.engine = engine;
        this.patterns = patterns.stream().map(p -> Pattern.compile(p, Pattern.CASE_INSENSITIVE)).toList();
    }

    @Override
    public void accept(String backendId, Throwable error) {
        if (error instanceof BackendException be && !be.kind().backendFault()) {
            return;
        }
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String message = t.getMessage();
            Optional<Pattern> match = message == null ? Optional.empty()
                    : patterns.stream().filter(p -> p.matcher(message).find()).findFirst();
            if (match.isPresent()) {
                Map<String, Object> figures = new LinkedHashMap<>();
                figures.put("pattern", match.get().pattern());
                figures.put("error", error instanceof BackendException be ? be.kind().name() : error.getClass().getName());
                try {
                    engine.rollbackIfPromoted(backendId, Actor.POLICY, "fatal backend error: " + shorten(message),
                            figures);
                } catch (PolicyStoreUnavailableException e) {
                    // The caller gets the backend's own error, not the store's; the breaker still judges the backend.
                    log.warn("backend '{}': fatal error, but the rollback could not be stored: {}", backendId,
                            e.getMessage());
                }
                return;
            }
        }
    }

    private static String shorten(String message) {
        return message.length() <= MAX_MESSAGE ? message : message.substring(0, MAX_MESSAGE) + "...";
    }
}
