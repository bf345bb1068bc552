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
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rollback policy's state machine. Every change is written to the {@link PolicyStore}
 * (state and audit event in one commit) before it becomes visible to routing, so what routing
 * acts on is never ahead of what a restart would find. Each transition is decided on the state
 * the store holds, under its lock: with a store shared by several replicas, a decision is never
 * made on a state another replica has already changed ({@link #refresh} brings in their changes).
 * Reads ({@link #state}) are lock-free: the request path asks on every request.
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
     * changed), a rolled-back or operator-disabled one stays as it was. With a shared store each
     * step is one transition under the store's lock, so replicas starting together register a
     * backend once.
     */
    public synchronized void start() {
        roles.forEach((id, role) -> {
            boolean[] reroled = {false};
            BackendPolicyState known = change(id, stored -> {
                if (stored == null) {
                    return register(id, role);
                }
                reroled[0] = stored.role() != role;
                return reroled[0] ? changeRole(stored, role) : null;
            });
            if (known.role() == Role.CANDIDATE && (reroled[0] || known.state() == PolicyState.CANDIDATE
                    || known.state() == PolicyState.PROMOTED)) {
                change(id, current -> recheck(current, reroled[0]));
            }
        });
        log.info("policy states: {}", states.values().stream()
                .map(s -> s.backendId() + "=" + s.state() + (s.draining() ? "(draining)" : "")).toList());
    }

    private PolicyStore.Transition register(String id, Role role) {
        if (role == Role.ORACLE) {
            BackendPolicyState state = new BackendPolicyState(id, role, PolicyState.ACTIVE, "oracle", false, clock.instant());
            return transition(state, Actor.SYSTEM, "register", null, Map.of());
        }
        PreflightCheck.Outcome outcome = preflight.check(id);
        PolicyState next = outcome.passed() ? PolicyState.CANDIDATE : PolicyState.DISABLED;
        BackendPolicyState state = new BackendPolicyState(id, role, next, preflightReason(outcome), false, clock.instant());
        return transition(state, Actor.PREFLIGHT, "preflight", null, outcome.figures());
    }

    private PolicyStore.Transition changeRole(BackendPolicyState known, Role role) {
        if (role == Role.ORACLE) {
            return transition(new BackendPolicyState(known.backendId(), role, PolicyState.ACTIVE, "role changed to oracle",
                    known.draining(), clock.instant()), Actor.SYSTEM, "role", known.state(), Map.of("role", "ORACLE"));
        }
        return transition(new BackendPolicyState(known.backendId(), role, PolicyState.DISABLED, "role changed to candidate",
                known.draining(), clock.instant()), Actor.SYSTEM, "role", known.state(), Map.of("role", "CANDIDATE"));
    }

    /**
     * Preflight again for a candidate that is enabled (or, {@code reroled}, has just become a
     * candidate); failing disables it, passing moves a disabled one to CANDIDATE.
     */
    private PolicyStore.Transition recheck(BackendPolicyState known, boolean reroled) {
        boolean enabled = known.state() == PolicyState.CANDIDATE || known.state() == PolicyState.PROMOTED;
        if (known.role() != Role.CANDIDATE || !enabled && !(reroled && known.state() == PolicyState.DISABLED)) {
            return null; // another replica moved it meanwhile
        }
        PreflightCheck.Outcome outcome = preflight.check(known.backendId());
        if (!outcome.passed()) {
            return transition(known.moveTo(PolicyState.DISABLED, preflightReason(outcome), clock.instant()),
                    Actor.PREFLIGHT, "preflight", known.state(), outcome.figures());
        }
        return known.state() == PolicyState.DISABLED ? transition(known.moveTo(PolicyState.CANDIDATE,
                preflightReason(outcome), clock.instant()), Actor.PREFLIGHT, "preflight", known.state(),
                outcome.figures()) : null;
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
        require(backendId);
        String[] refused = {null};
        BackendPolicyState result = change(backendId, current -> {
            if (current.role() == Role.ORACLE) {
                expect(current, "enable", PolicyState.DISABLED);
                return transition(current.moveTo(PolicyState.ACTIVE, why(reason, "enabled"), clock.instant()), actor,
                        "enable", current.state(), Map.of());
            }
            expect(current, "enable", PolicyState.DISABLED, PolicyState.ROLLED_BACK);
            PreflightCheck.Outcome outcome = preflight.check(backendId);
            if (!outcome.passed()) {
                refused[0] = preflightReason(outcome);
                return transition(current.moveTo(PolicyState.DISABLED, refused[0], clock.instant()), Actor.PREFLIGHT,
                        "preflight", current.state(), outcome.figures());
            }
            return transition(current.moveTo(PolicyState.CANDIDATE, why(reason, "re-armed; " + outcome.reason()),
                    clock.instant()), actor, "enable", current.state(), outcome.figures());
        });
        if (refused[0] != null) {
            throw new PolicyConflictException("preflight_failed",
                    "Backend '" + backendId + "' cannot be enabled: " + refused[0]);
        }
        return result;
    }

    public synchronized BackendPolicyState disable(String backendId, Actor actor, String reason) {
        require(backendId);
        return change(backendId, current -> {
            if (current.state() == PolicyState.DISABLED) {
                throw conflict(current, "disable");
            }
            return transition(current.moveTo(PolicyState.DISABLED, why(reason, "disabled by "
                    + actor.name().toLowerCase()), clock.instant()), actor, "disable", current.state(), Map.of());
        });
    }

    public synchronized BackendPolicyState promote(String backendId, Actor actor, String reason,
            Map<String, Object> figures) {
        requireCandidate(backendId, "promote");
        return change(backendId, current -> {
            expect(current, "promote", PolicyState.CANDIDATE);
            return transition(current.moveTo(PolicyState.PROMOTED, why(reason, "promoted"), clock.instant()), actor,
                    "promote", current.state(), figures);
        });
    }

    public synchronized BackendPolicyState rollback(String backendId, Actor actor, String reason,
            Map<String, Object> figures) {
        requireCandidate(backendId, "roll back");
        return change(backendId, current -> {
            expect(current, "roll back", PolicyState.PROMOTED);
            return rollbackTransition(current, actor, reason, figures);
        });
    }

    /**
     * Rolls back when the backend is promoted, otherwise does nothing: for the runtime rules. With a
     * shared store the state is read under the store's lock, so when several replicas judge the
     * same candidate at once exactly one pivot-back is written; the others find it rolled back.
     */
    public synchronized Optional<BackendPolicyState> rollbackIfPromoted(String backendId, Actor actor, String reason,
            Map<String, Object> figures) {
        if (!states.containsKey(backendId)) {
            return Optional.empty();
        }
        boolean[] written = {false};
        BackendPolicyState result = change(backendId, current -> {
            if (current.role() != Role.CANDIDATE || current.state() != PolicyState.PROMOTED) {
                return null;
            }
            written[0] = true;
            return rollbackTransition(current, actor, reason, figures);
        });
        return written[0] ? Optional.of(result) : Optional.empty();
    }

    private PolicyStore.Transition rollbackTransition(BackendPolicyState current, Actor actor, String reason,
            Map<String, Object> figures) {
        log.warn("rolling back backend '{}' ({}): {}", current.backendId(), actor, reason);
        return transition(current.moveTo(PolicyState.ROLLED_BACK, why(reason, "rolled back"), clock.instant()), actor,
                "rollback", current.state(), figures);
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
        require(backendId);
        String action = draining ? "drain" : "undrain";
        return change(backendId, current -> {
            if (current.draining() == draining) {
                throw new PolicyConflictException("invalid_transition", "Backend '" + backendId + "' is "
                        + (draining ? "already" : "not") + " draining.");
            }
            return transition(current.withDraining(draining), actor, action, current.state(), Map.of(),
                    why(reason, action + "ed by " + actor.name().toLowerCase()));
        });
    }

    /** Journals something that is not a state change (a gate verdict); returns the stored event. */
    public AuditEvent note(String backendId, Actor actor, String action, String reason, Map<String, Object> figures) {
        BackendPolicyState current = states.get(backendId);
        PolicyState state = current == null ? null : current.state();
        return store.record(null, new AuditEvent(0, clock.instant(), backendId, actor, action, state, state, reason,
                figures));
    }

    /**
     * Reads what another replica wrote: every backend whose stored state differs from the one known
     * here is updated, and the listeners hear of it as of a change made here.
     */
    public synchronized void refresh() {
        Map<String, BackendPolicyState> stored = store.states();
        roles.keySet().forEach(id -> {
            BackendPolicyState state = stored.get(id);
            if (state != null) {
                apply(state);
            }
        });
    }

    /**
     * One transition of one backend: {@code decide} sees the stored state (the one known here when
     * nothing is stored yet, or null before registration) and returns what to write, or null.
     *
     * @return the backend's state afterwards
     */
    private BackendPolicyState change(String backendId, Function<BackendPolicyState, PolicyStore.Transition> decide) {
        BackendPolicyState[] seen = {null};
        PolicyStore.Transition written;
        try {
            written = store.transition(backendId, stored -> {
                seen[0] = stored != null ? stored : states.get(backendId);
                return decide.apply(seen[0]);
            });
        } catch (PolicyConflictException e) {
            apply(seen[0]); // the store may know a newer state than this replica did: catch up
            throw e;
        }
        BackendPolicyState now = written != null && written.state() != null ? written.state() : seen[0];
        apply(now);
        return now;
    }

    private void apply(BackendPolicyState state) {
        if (state == null) {
            return;
        }
        BackendPolicyState previous = states.put(state.backendId(), state);
        if (!state.equals(previous)) {
            listeners.forEach(listener -> listener.accept(state));
        }
    }

    private PolicyStore.Transition transition(BackendPolicyState next, Actor actor, String action, PolicyState from,
            Map<String, Object> figures) {
        return transition(next, actor, action, from, figures, next.reason());
    }

    /** @param eventReason why this event happened, for the journal (a state change: the state's new reason) */
    private PolicyStore.Transition transition(BackendPolicyState next, Actor actor, String action, PolicyState from,
            Map<String, Object> figures, String eventReason) {
        return new PolicyStore.Transition(next, new AuditEvent(0, clock.instant(), next.backendId(), actor, action, from,
                next.state(), eventReason, figures));
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
