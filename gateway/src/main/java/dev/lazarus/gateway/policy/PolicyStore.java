package dev.lazarus.gateway.policy;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The policy's durable memory: backend states, run-time route overrides and the audit journal.
 * Two implementations: {@link EmbeddedPolicyStore} (one H2 MVStore file, one gateway) and
 * {@code PostgresPolicyStore} (one database shared by every replica). The policy logic lives in
 * {@link PolicyEngine} and {@link RouteOverrides}, never in a store: a store only keeps what it is
 * given, atomically, and tells when another replica changed something.
 */
public interface PolicyStore extends AutoCloseable {

    /** What a transition writes: the backend's next state (null: unchanged) and the event that explains it. */
    record Transition(BackendPolicyState state, AuditEvent event) {}

    /**
     * How the store is doing, for health.
     *
     * @param kind      {@code embedded} or {@code postgres}
     * @param reachable whether the last read or write reached it
     * @param lastSync  when this replica last read what the others wrote (null: embedded, nothing to read)
     * @param problem   why it is unreachable, or null
     */
    record Status(String kind, boolean reachable, Instant lastSync, String problem) {}

    /** Opens (or creates) the embedded store in {@code directory}. */
    static PolicyStore open(Path directory) {
        return EmbeddedPolicyStore.open(directory);
    }

    /** An embedded store that forgets everything when closed; for tests and throw-away gateways. */
    static PolicyStore inMemory() {
        return EmbeddedPolicyStore.inMemory();
    }

    Map<String, BackendPolicyState> states();

    /** Run-time fallback chains by public model name. */
    Map<String, List<String>> routeOverrides();

    /**
     * Reads the backend's stored state (null when none is stored), asks {@code decide} what to write
     * and writes it, all under one lock that every transition of every replica sharing the store
     * takes: a decision is never made on a state another replica has already changed. {@code decide}
     * may return null (nothing to write) or throw (nothing is written, the exception propagates).
     *
     * @return what was written, its event numbered; null when nothing was
     */
    Transition transition(String backendId, Function<BackendPolicyState, Transition> decide);

    /**
     * Stores a backend's new state (null: unchanged) and the event that explains it, atomically.
     *
     * @return the event with its journal sequence number
     */
    AuditEvent record(BackendPolicyState state, AuditEvent event);

    /** Stores a model's fallback chain ({@code backends} null removes the override) and its event. */
    AuditEvent recordRoute(String model, List<String> backends, AuditEvent event);

    long eventCount();

    /** Up to {@code limit} events, newest first, skipping the {@code skip} newest. */
    List<AuditEvent> newestEvents(long skip, int limit);

    /** Every event, oldest first. */
    List<AuditEvent> allEvents();

    /** Whether other gateways share this store (and so its journal, states and leases). */
    default boolean shared() {
        return false;
    }

    /** Called (on the store's own thread) after another replica changed states, routes or the journal. */
    default void onExternalChange(Runnable listener) {}

    /**
     * Takes or renews the named lease for {@code holder} until {@code ttl} from now: one decision gate
     * per candidate across replicas. False while another holder's lease is unexpired.
     */
    boolean tryLease(String name, String holder, Duration ttl);

    /** Gives the lease back if {@code holder} has it. */
    void releaseLease(String name, String holder);

    /** This replica's live figures, published for the others ({@code figures} by backend id). */
    default void publishFigures(String replica, Map<String, BackendLiveStats.Snapshot> figures) {}

    /** Every replica's figures younger than {@code maxAge}, by backend id; this replica's own included. */
    default Map<String, List<BackendLiveStats.Snapshot>> sharedFigures(Duration maxAge) {
        return Map.of();
    }

    Status status();

    @Override
    void close();
}
