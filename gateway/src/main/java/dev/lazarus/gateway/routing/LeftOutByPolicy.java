package dev.lazarus.gateway.routing;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;

/**
 * Why the gateway's own policy kept a backend out of a request's plan ("drained by an operator", "disabled"): unlike
 * a backend's failure, whose text can name upstream addresses, the reason is the gateway's and a client's 503 may
 * show it.
 */
public final class LeftOutByPolicy extends BackendException {

    private final String reason;

    public LeftOutByPolicy(String backendId, String reason) {
        super(BackendErrorKind.UNAVAILABLE, "backend '" + backendId + "' is " + reason);
        this.reason = reason;
    }

    /** The reason alone, such as {@code drained by an operator}. */
    public String reason() {
        return reason;
    }
}
