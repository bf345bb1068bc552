package dev.lazarus.gateway.policy.gate;

import dev.lazarus.gateway.policy.PolicyStore;
import java.time.Duration;

/**
 * One decision gate per candidate across replicas: a job runs only while its replica holds the
 * lease {@code gate:<candidate>} in the policy store, renewed at every benchmark call and given back
 * at the end. A replica that dies mid-job holds it until it expires ({@code ttl}: longer than one
 * call may take). With the embedded store there is one replica and the lease never refuses.
 *
 * @param store   where the lease lives
 * @param replica the holder's name ({@code lazarus.policy.replica-id})
 * @param ttl     how long a lease lasts without renewal
 */
public record GateLease(PolicyStore store, String replica, Duration ttl) {

    static String name(String candidateId) {
        return "gate:" + candidateId;
    }

    /** Takes or renews the lease; false while another replica holds it. */
    boolean take(String candidateId) {
        return store.tryLease(name(candidateId), replica, ttl);
    }

    void release(String candidateId) {
        store.releaseLease(name(candidateId), replica);
    }
}
