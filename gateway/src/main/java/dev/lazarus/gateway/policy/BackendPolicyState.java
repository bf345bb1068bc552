package dev.lazarus.gateway.policy;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.Objects;

/**
 * One backend as the policy sees it; immutable, replaced on every change.
 *
 * @param backendId the backend's configured id
 * @param role      oracle or candidate
 * @param state     where it stands
 * @param reason    why it is in that state, in words an operator can act on
 * @param draining  an operator asked it to finish in-flight requests and take no new ones
 * @param since     when {@code state} was entered
 */
public record BackendPolicyState(@JsonProperty("backend_id") String backendId, Role role, PolicyState state, String reason, boolean draining,
                                 Instant since) {

    public BackendPolicyState {
        Objects.requireNonNull(backendId, "backendId");
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(since, "since");
        reason = reason == null ? "" : reason;
    }

    /** Whether new requests may be routed to it. */
    public boolean routable() {
        return state.serves() && !draining;
    }

    BackendPolicyState moveTo(PolicyState next, String why, Instant at) {
        return new BackendPolicyState(backendId, role, next, why, draining, at);
    }

    BackendPolicyState withDraining(boolean value) {
        return new BackendPolicyState(backendId, role, state, reason, value, since);
    }

    BackendPolicyState withRole(Role value) {
        return new BackendPolicyState(backendId, value, state, reason, draining, since);
    }
}
