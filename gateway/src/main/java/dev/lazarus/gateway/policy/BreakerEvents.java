package dev.lazarus.gateway.policy;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Breakers stay local (each replica judges what it sees, as Envoy's outlier detection does), but
 * with a shared store a breaker opening is journalled as {@code breaker-open} with the replica's
 * name, so every replica's {@code /admin/events} shows it. An operator forcing a breaker open is
 * journalled by the admin API already and is not repeated here. Subscribe {@link #opened} to {@link BreakerOpenings}.
 */
public final class BreakerEvents {

    private static final Logger log = LoggerFactory.getLogger(BreakerEvents.class);

    private final PolicyEngine engine;
    private final String replica;

    public BreakerEvents(PolicyEngine engine, String replica) {
        this.engine = engine;
        this.replica = replica;
    }

    /** Journals one opening (a database round trip: called off the event loop, as {@link BreakerOpenings} calls it). */
    public void opened(BreakerOpenings.Opening opening) {
        String backendId = opening.backendId();
        float failureRate = opening.failureRate();
        float slowCallRate = opening.slowCallRate();
        if (engine.state(backendId).isEmpty()) {
            return; // a breaker of no configured backend
        }
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("replica", replica);
        if (failureRate >= 0) {
            figures.put("failure_rate", failureRate);
        }
        if (slowCallRate >= 0) {
            figures.put("slow_call_rate", slowCallRate);
        }
        String reason = String.format(Locale.ROOT, "circuit breaker opened on replica %s (failure rate %.0f%%, slow calls %.0f%%)",
                replica, Math.max(0, failureRate), Math.max(0, slowCallRate));
        try {
            engine.note(backendId, Actor.POLICY, "breaker-open", reason, figures);
        } catch (RuntimeException e) {
            log.warn("backend '{}': breaker opening not published: {}", backendId, e.toString());
        }
    }
}
