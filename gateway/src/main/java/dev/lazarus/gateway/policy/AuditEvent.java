package dev.lazarus.gateway.policy;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * One entry of the audit journal: every state change, operator override and route change.
 *
 * @param seq       position in the journal, 1 for the first entry, without gaps
 * @param at        when it happened
 * @param backendId the backend concerned, or null for a change that is not about one (a route)
 * @param actor     who or what did it
 * @param action    what was done: {@code promote}, {@code rollback}, {@code enable}, {@code disable},
 *                  {@code drain}, {@code undrain}, {@code register}, {@code gate}, {@code route}
 * @param from      state before, or null
 * @param to        state after, or null
 * @param reason    why
 * @param figures   the numbers behind the decision (tok/s, byte counts, breaker openings ...)
 */
public record AuditEvent(long seq, Instant at, @JsonProperty("backend_id") String backendId, Actor actor, String action, PolicyState from,
                         PolicyState to, String reason, Map<String, Object> figures) {

    public AuditEvent {
        Objects.requireNonNull(at, "at");
        Objects.requireNonNull(actor, "actor");
        Objects.requireNonNull(action, "action");
        reason = reason == null ? "" : reason;
        figures = figures == null ? Map.of() : Map.copyOf(figures);
    }

    /** The same event at its place in the journal. */
    public AuditEvent withSeq(long value) {
        return new AuditEvent(value, at, backendId, actor, action, from, to, reason, figures);
    }
}
