package dev.lazarus.gateway.policy;

import java.time.Clock;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rollback policy's state machine. Every change is written to the {@link PolicyStore}
 * (state and audit event in one commit) before it becomes visible to routing, so what routing
 * acts on is never ahead of what a restart would find. Reads ({@link #state}) are lock-free: the
 * request path asks on every request.
 *
 * <pre>
 * candidate: DISABLED --enable+preflight--> CANDIDATE --promote--> PROMOTED --rollback--> ROLLED_BACK
 *            ROLLED_BACK --enable+preflight--> CANDIDATE;  any --disable--> DISABLED
 * oracle:    ACTIVE <--enable/disable--> DISABLED
 * </pre>
 *
 * Draining is a flag beside the state: a draining backend keeps its state, finishes what it has
 * and gets no new requests.
 */
public final class PolicyEngine {

    private static final Logger log = LoggerFactory.getLogger(PolicyEngine.class);

    private final PolicyStore store;
    private final Map<String, Role> roles;
    private final PreflightCheck preflight;
    private final Clock clock;
    private final Map<String, BackendPolicyState> states = new ConcurrentHashMap<>();
    private final List<Consumer<BackendPolicyState>> listeners = new CopyOnWriteArrayList<>();

    /**
     * @param roles every configured backend id and its role, in configuration order
     */
    public PolicyEngine(PolicyStore store, Map<String, Role> roles, PreflightCheck preflight, Clock clock) {
        this.store = store;
        this.roles = new LinkedHashMap<>(roles);
        this.preflight = preflight;
        this.clock = clock;
    }

    /**
     * Loads the stored states and brings them in line with the configuration: a new candidate
     * goes through preflight, an enabled candidate is checked again (the hardware may have
     * changed), a rolled-back or operator-disabled one stays as it was.
     */
    public synchronized void start() {
        Map<String, BackendPolicyState> stored = store.states();
        roles.forEach((id, role) -> {
            BackendPolicyState known = stored.get(id);
            if (known == null) {
                register(id, role);
            } else if (known.role() != role) {
                changeRole(known, role);
            } else {
                states.put(id, known);
                if (role == Role.CANDIDATE && (known.state() == PolicyState.CANDIDATE
                        || known.state() == PolicyState.PROMOTED)) {
                    recheck(known);
                }
            }
        });
        log.info("policy states: {}", states.values().stream()
                .map(s -> s.backendId() + "=" + s.state() + (s.draining() ? "(draining)" : "")).toList());
    }

    private void register(String id, Role role) {
        if (role == Role.ORACLE) {
            BackendPolicyState state = new BackendPolicyState(id, role, PolicyState.ACTIVE, "oracle", false, clock.instant());
            commit(state, Actor.SYSTEM, "register", null, Map.of());
            return;
        }
        PreflightCheck.Outcome outcome = preflight.check(id);
        PolicyState next = outcome.passed() ? PolicyState.CANDIDATE : PolicyState.DISABLED;
        BackendPolicyState state = new BackendPolicyState(id, role, next, preflightReason(outcome), false, clock.instant());
        commit(state, Actor.PREFLIGHT, "preflight", null, outcome.figures());
    }

    private void changeRole(BackendPolicyState known, Role role) {
        if (role == Role.ORACLE) {
            commit(new BackendPolicyState(known.backendId(), role, PolicyState.ACTIVE, "role changed to oracle",
                    known.draining(), clock.instant()), Actor.SYSTEM, "role", known.state(), Map.of("role", "ORACLE"));
            return;
        }
        BackendPolicyState disabled = commit(new BackendPolicyState(known.backendId(), role, PolicyState.DISABLED,
                "role changed to candidate", known.draining(), clock.instant()), Actor.SYSTEM, "role", known.state(),
                Map.of("role", "CANDIDATE"));
        recheck(disabled);
    }

    /** Preflight again for a candidate that is enabled (or newly re-roled); failing disables it. */
    private void recheck(BackendPolicyState known) {
        PreflightCheck.Outcome outcome = preflight.check(known.backendId());
        if (!outcome.passed()) {
            commit(known.moveTo(PolicyState.DISABLED, preflightReason(outcome), clock.instant()), Actor.PREFLIGHT,
                    "preflight", known.state(), outcome.figures());
        } else if (known.state() == PolicyState.DISABLED) {
            commit(known.moveTo(PolicyState.CANDIDATE, preflightReason(outcome), clock.instant()), Actor.PREFLIGHT,
                    "preflight", known.state(), outcome.figures());
        }
    }

    /** The backend's state; empty for an id the policy does not know. Lock-free. */
    public Optional<BackendPolicyState> state(String backendId) {
        return Optional.ofNullable(states.get(backendId));
    }

    /** Every backend, in configuration order. */
    public List<BackendPolicyState> states() {
        return roles.keySet().stream().map(states::get).filter(java.util.Objects::nonNull).toList();
    }

    public Collection<String> backendIds() {
        return roles.keySet();
    }

    /** Called after every change (routing caches, metrics gauges). */
    public void onChange(Consumer<BackendPolicyState> listener) {
        listeners.add(listener);
    }

    /**
     * Puts a backend (back) in service: an oracle becomes ACTIVE; a disabled or rolled-back
     * candidate is re-armed to CANDIDATE if preflight passes, else it stays DISABLED with the
     * preflight's reason and a {@code preflight_failed} conflict is thrown.
     */
    public synchronized BackendPolicyState enable(String backendId, Actor actor, String reason) {
        BackendPolicyState current = require(backendId);
        if (current.role() == Role.ORACLE) {
            expect(current, "enable", PolicyState.DISABLED);
            return commit(current.moveTo(PolicyState.ACTIVE, why(reason, "enabled"), clock.instant()), actor, "enable",
                    current.state(), Map.of());
        }
        expect(current, "enable", PolicyState.DISABLED, PolicyState.ROLLED_BACK);
        PreflightCheck.Outcome outcome = preflight.check(backendId);
        if (!outcome.passed()) {
            commit(current.moveTo(PolicyState.DISABLED, preflightReason(outcome), clock.instant()), Actor.PREFLIGHT,
                    "preflight", current.state(), outcome.figures());
            throw new PolicyConflictException("preflight_failed",
                    "Backend '" + backendId + "' cannot be enabled: " + preflightReason(outcome));
        }
        return commit(current.moveTo(PolicyState.CANDIDATE, why(reason, "re-armed; " + outcome.reason()),
                clock.instant()), actor, "enable", current.state(), outcome.figures());
    }

    public synchronized BackendPolicyState disable(String backendId, Actor actor, String reason) {
        BackendPolicyState current = require(backendId);
        if (current.state() == PolicyState.DISABLED) {
            throw conflict(current, "disable");
        }
        return commit(current.moveTo(PolicyState.DISABLED, why(reason, "disabled by " + actor.name().toLowerCase()),
                clock.instant()), actor, "disable", current.state(), Map.of());
    }

    public synchronized BackendPolicyState promote(String backendId, Actor actor, String reason,
            Map<String, Object> figures) {
        BackendPolicyState current = requireCandidate(backendId, "promote");
        expect(current, "promote", PolicyState.CANDIDATE);
        return commit(current.moveTo(PolicyState.PROMOTED, why(reason, "promoted"), clock.instant()), actor, "promote",
                current.state(), figures);
    }

    public synchronized BackendPolicyState rollback(String backendId, Actor actor, String reason,
            Map<String, Object> figures) {
        BackendPolicyState current = requireCandidate(backendId, "roll back");
        expect(current, "roll back", PolicyState.PROMOTED);
        log.warn("rolling back backend '{}' ({}): {}", backendId, actor, reason);
        return commit(current.moveTo(PolicyState.ROLLED_BACK, why(reason, "rolled back"), clock.instant()), actor,
                "rollback", current.state(), figures);
    }

    /** Rolls back when the backend is promoted, otherwise does nothing: for the runtime rules. */
    public synchronized Optional<BackendPolicyState> rollbackIfPromoted(String backendId, Actor actor, String reason,
            Map<String, Object> figures) {
        BackendPolicyState current = states.get(backendId);
        if (current == null || current.state() != PolicyState.PROMOTED) {
            return Optional.empty();
        }
        return Optional.of(rollback(backendId, actor, reason, figures));
    }

    public synchronized BackendPolicyState drain(String backendId, Actor actor, boolean draining) {
        return drain(backendId, actor, draining, null);
    }

    /**
     * Sets or clears the draining flag. The state and its reason stay as they are; the journal entry
     * carries this action's own reason ({@code reason}, else "drained/undrained by ..."), not the
     * state's older one.
     */
    public synchronized BackendPolicyState drain(String backendId, Actor actor, boolean draining, String reason) {
        BackendPolicyState current = require(backendId);
        String action = draining ? "drain" : "undrain";
        if (current.draining() == draining) {
            throw new PolicyConflictException("invalid_transition", "Backend '" + backendId + "' is "
                    + (draining ? "already" : "not") + " draining.");
        }
        return commit(current.withDraining(draining), actor, action, current.state(), Map.of(),
                why(reason, action + "ed by " + actor.name().toLowerCase()));
    }

    /** Journals something that is not a state change (a gate verdict); returns the stored event. */
    public AuditEvent note(String backendId, Actor actor, String action, String reason, Map<String, Object> figures) {
        BackendPolicyState current = states.get(backendId);
        PolicyState state = current == null ? null : current.state();
        return store.record(null, new AuditEvent(0, clock.instant(), backendId, actor, action, state, state, reason,
                figures));
    }

    private BackendPolicyState commit(BackendPolicyState next, Actor actor, String action, PolicyState from,
            Map<String, Object> figures) {
        return commit(next, actor, action, from, figures, next.reason());
    }

    /** @param eventReason why this event happened, for the journal (a state change: the state's new reason) */
    private BackendPolicyState commit(BackendPolicyState next, Actor actor, String action, PolicyState from,
            Map<String, Object> figures, String eventReason) {
        store.record(next, new AuditEvent(0, clock.instant(), next.backendId(), actor, action, from, next.state(),
                eventReason, figures));
        states.put(next.backendId(), next);
        listeners.forEach(listener -> listener.accept(next));
        return next;
    }

    private BackendPolicyState require(String backendId) {
        BackendPolicyState current = states.get(backendId);
        if (current == null) {
            throw new UnknownBackendException(backendId);
        }
        return current;
    }

    private BackendPolicyState requireCandidate(String backendId, String verb) {
        BackendPolicyState current = require(backendId);
        if (current.role() != Role.CANDIDATE) {
            throw new PolicyConflictException("invalid_transition",
                    "Backend '" + backendId + "' is an oracle; only candidates can " + verb + ".");
        }
        return current;
    }

    private static void expect(BackendPolicyState current, String verb, PolicyState... allowed) {
        for (PolicyState state : allowed) {
            if (current.state() == state) {
                return;
            }
        }
        throw conflict(current, verb);
    }

    private static PolicyConflictException conflict(BackendPolicyState current, String verb) {
        String hint = current.state() == PolicyState.ROLLED_BACK && !verb.equals("disable")
                ? " Re-arm it first (enable)." : "";
        return new PolicyConflictException("invalid_transition", "Cannot " + verb + " backend '" + current.backendId()
                + "': it is " + current.state() + " (" + current.reason() + ")." + hint);
    }

    private static String preflightReason(PreflightCheck.Outcome outcome) {
        return (outcome.passed() ? "preflight passed: " : "preflight failed: ") + outcome.reason();
    }

    private static String why(String given, String fallback) {
        return given == null || given.isBlank() ? fallback : given;
    }
}
