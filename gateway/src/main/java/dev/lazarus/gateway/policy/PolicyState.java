package dev.lazarus.gateway.policy;

/**
 * Where a backend stands. Candidates move between {@link #DISABLED}, {@link #CANDIDATE},
 * {@link #PROMOTED} and {@link #ROLLED_BACK}; oracles are {@link #ACTIVE} or, when an operator
 * took them out, {@link #DISABLED}.
 */
public enum PolicyState {
    /** An oracle in service. */
    ACTIVE(true),
    /** Preflight failed or an operator disabled it: no traffic. */
    DISABLED(false),
    /** Ready and being evaluated by the decision gate: no traffic. */
    CANDIDATE(false),
    /** Passed the gate: primary for its models, the oracle behind it. */
    PROMOTED(true),
    /** A pivot-back criterion was hit while promoted: no traffic until an operator re-arms it. */
    ROLLED_BACK(false);

    private final boolean serves;

    PolicyState(boolean serves) {
        this.serves = serves;
    }

    /** Whether a backend in this state takes traffic (unless it is draining). */
    public boolean serves() {
        return serves;
    }
}
