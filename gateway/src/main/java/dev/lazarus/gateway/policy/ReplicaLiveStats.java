package dev.lazarus.gateway.policy;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Live figures of all replicas together, for the rules that judge a candidate for all of them
 * (the slow-generation pivot-back): each replica publishes its own window to the shared store every
 * {@code interval} and reads everyone's; a replica that stopped publishing drops out after three
 * intervals. Merged per backend: calls summed; tok/s, error rate and the median TTFT weighted by
 * calls (a median of medians is an estimate, not the median of all calls); the 95th percentile TTFT
 * is the highest replica's (an upper bound, never an underestimate of the tail).
 */
public final class ReplicaLiveStats implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ReplicaLiveStats.class);

    private final PolicyStore store;
    private final BackendLiveStats local;
    private final String replica;
    private final Collection<String> backendIds;
    private final Duration maxAge;
    private volatile Map<String, List<BackendLiveStats.Snapshot>> shared = Map.of();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("lazarus-figures").daemon().factory());

    public ReplicaLiveStats(PolicyStore store, BackendLiveStats local, String replica, Collection<String> backendIds,
            Duration interval) {
        this.store = store;
        this.local = local;
        this.replica = replica;
        this.backendIds = List.copyOf(backendIds);
        this.maxAge = interval.multipliedBy(3);
        long millis = Math.max(1, interval.toMillis());
        scheduler.scheduleWithFixedDelay(this::exchange, 0, millis, TimeUnit.MILLISECONDS);
    }

    /** Publishes this replica's figures and reads everyone's. */
    void exchange() {
        try {
            Map<String, BackendLiveStats.Snapshot> mine = new LinkedHashMap<>();
            backendIds.forEach(id -> local.snapshot(id).ifPresent(s -> mine.put(id, s)));
            store.publishFigures(replica, mine);
            shared = store.sharedFigures(maxAge);
        } catch (RuntimeException e) {
            // The store is away: judge on this replica's own figures until it is back.
            shared = Map.of();
            log.debug("live figures not exchanged: {}", e.toString());
        }
    }

    /** Every replica's figures merged; this replica's own while none could be read. */
    public BackendLiveStats view() {
        return id -> {
            List<BackendLiveStats.Snapshot> all = shared.get(id);
            return all == null || all.isEmpty() ? local.snapshot(id) : Optional.of(merge(all));
        };
    }

    static BackendLiveStats.Snapshot merge(List<BackendLiveStats.Snapshot> all) {
        long calls = 0;
        double tpsSum = 0;
        long tpsCalls = 0;
        double errorSum = 0;
        double p50Sum = 0;
        long p50Calls = 0;
        Duration p95 = null;
        Instant at = Instant.EPOCH;
        for (BackendLiveStats.Snapshot s : all) {
            calls += s.calls();
            errorSum += s.errorRate() * s.calls();
            if (!Double.isNaN(s.tokensPerSecond())) {
                tpsSum += s.tokensPerSecond() * s.calls();
                tpsCalls += s.calls();
            }
            if (s.ttftP50() != null) {
                p50Sum += s.ttftP50().toNanos() * (double) s.calls();
                p50Calls += s.calls();
            }
            if (s.ttftP95() != null && (p95 == null || s.ttftP95().compareTo(p95) > 0)) {
                p95 = s.ttftP95();
            }
            at = s.at().isAfter(at) ? s.at() : at;
        }
        return new BackendLiveStats.Snapshot(tpsCalls == 0 ? Double.NaN : tpsSum / tpsCalls,
                p50Calls == 0 ? null : Duration.ofNanos(Math.round(p50Sum / p50Calls)), p95,
                calls == 0 ? 0 : errorSum / calls, calls, at);
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
