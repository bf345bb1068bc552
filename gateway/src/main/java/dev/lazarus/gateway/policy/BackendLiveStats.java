package dev.lazarus.gateway.policy;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Live per-backend figures, measured on real traffic by the resilience package (which implements
 * this as a bean); the policy reads them for the speed pivot-back rule and the admin API shows
 * them. Without an implementation there are no figures and the speed rule never fires.
 */
@FunctionalInterface
public interface BackendLiveStats {

    /** The backend's recent figures, or empty when it has not served anything recently. */
    Optional<Snapshot> snapshot(String backendId);

    /**
     * @param tokensPerSecond recent generation speed (completion tokens over generation time),
     *                        over the implementation's window; NaN when there were no judged calls
     * @param ttftP50         median time to first token, or null when unknown
     * @param ttftP95         95th percentile time to first token, or null when unknown
     * @param errorRate       backend-fault failures over calls, 0..1
     * @param calls           calls in the window
     * @param at              when these figures were computed
     */
    record Snapshot(double tokensPerSecond, Duration ttftP50, Duration ttftP95, double errorRate, long calls,
                    Instant at) {}

    static BackendLiveStats none() {
        return id -> Optional.empty();
    }
}
