package dev.lazarus.gateway.policy;

/**
 * An operation the backend's current state does not allow (promote a rolled-back candidate,
 * roll back one that is not promoted, enable what is enabled). The admin API answers 409.
 */
public final class PolicyConflictException extends RuntimeException {

    private final String code;

    public PolicyConflictException(String code, String message) {
        super(message, null, false, false);
        this.code = code;
    }

    /** Machine-readable reason: {@code invalid_transition}, {@code preflight_failed}. */
    public String code() {
        return code;
    }
}
