package dev.lazarus.gateway.policy;

/**
 * The shared policy store could not be reached: nothing was written. The gateway keeps serving with
 * the states it last knew; the admin API answers 503 and the operator retries once the store is back.
 */
public class PolicyStoreUnavailableException extends RuntimeException {

    public PolicyStoreUnavailableException(Throwable cause) {
        super("The policy store is unreachable (" + cause.getClass().getSimpleName() + "); nothing was changed."
                + " Replicas keep serving with the states they last knew; retry when it is back.", cause);
    }
}
