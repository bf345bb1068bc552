package dev.lazarus.gateway.policy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import dev.lazarus.gateway.config.GatewayConfigException;
import org.h2.mvstore.DataUtils;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStoreException;
import org.h2.mvstore.MVStore;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * The single-machine {@link PolicyStore}: backend states, run-time route overrides and the audit
 * journal in one H2 MVStore file. Every change is one MVStore commit followed by an fsync: the state and the
 * journal entry that explains it are written together or not at all. MVStore writes each commit as
 * a new checksummed chunk and on open falls back to the last complete one, so a {@code kill -9}
 * in the middle of a write loses at most that write, never an earlier one, and leaves nothing
 * half-written. One writer per file (MVStore locks it).
 */
public final class EmbeddedPolicyStore implements PolicyStore {

    /** The store's file inside the configured directory. */
    public static final String FILE_NAME = "policy.mv.db";
    /** Written by the gateway that opened the store: the process a second gateway's refusal names. */
    static final String HOLDER_FILE = "holder";

    private static final TypeReference<List<String>> STRING_LIST = new TypeReference<>() {};

    private final MVStore store;
    private final MVMap<String, String> states;
    private final MVMap<String, String> routes;
    private final MVMap<Long, String> journal;
    private final JsonMapper json = JsonMapper.builder().build();
    private final Map<String, Lease> leases = new HashMap<>();

    private record Lease(String holder, Instant until) {}

    private EmbeddedPolicyStore(MVStore store) {
        this.store = store;
        this.states = store.openMap("states");
        this.routes = store.openMap("routes");
        this.journal = store.openMap("journal");
    }

    /** Opens (or creates) the store in {@code directory}. */
    public static EmbeddedPolicyStore open(Path directory) {
        try {
            Files.createDirectories(directory);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the policy store directory " + directory, e);
        }
        MVStore store;
        try {
            store = new MVStore.Builder().fileName(directory.resolve(FILE_NAME).toString()).autoCommitDisabled().open();
        } catch (MVStoreException e) {
            if (e.getErrorCode() == DataUtils.ERROR_FILE_LOCKED) {
                throw new GatewayConfigException("the policy store " + directory.toAbsolutePath() + " is in use by "
                        + holder(directory) + ": stop that gateway, or give this one its own lazarus.policy.store-path");
            }
            throw e;
        }
        try {
            Files.writeString(directory.resolve(HOLDER_FILE), ProcessHandle.current().pid() + " on "
                    + java.net.InetAddress.getLocalHost().getHostName() + " since " + Instant.now() + "\n");
        } catch (IOException e) {
            // only for the message another gateway gets: not worth failing the start
        }
        return new EmbeddedPolicyStore(store);
    }

    /** Who holds the lock, as the holder wrote it when it opened the store (MVStore's lock itself names no one). */
    private static String holder(Path directory) {
        try {
            return "another gateway (process " + Files.readString(directory.resolve(HOLDER_FILE)).strip() + ")";
        } catch (IOException e) {
            return "another process";
        }
    }

    /** A store that forgets everything when closed; for tests and throw-away gateways. */
    public static EmbeddedPolicyStore inMemory() {
        return new EmbeddedPolicyStore(new MVStore.Builder().autoCommitDisabled().open());
    }

    @Override
    public synchronized Map<String, BackendPolicyState> states() {
        Map<String, BackendPolicyState> result = new LinkedHashMap<>();
        states.forEach((id, text) -> result.put(id, json.readValue(text, BackendPolicyState.class)));
        return result;
    }

    /** Run-time fallback chains by public model name. */
    @Override
    public synchronized Map<String, List<String>> routeOverrides() {
        Map<String, List<String>> result = new LinkedHashMap<>();
        routes.forEach((model, text) -> result.put(model, json.readValue(text, STRING_LIST)));
        return result;
    }

    /**
     * Stores a backend's new state (null: unchanged) and the event that explains it, atomically.
     *
     * @return the event with its journal sequence number
     */
    @Override
    public synchronized Transition transition(String backendId, Function<BackendPolicyState, Transition> decide) {
        String stored = states.get(backendId);
        Transition next = decide.apply(stored == null ? null : json.readValue(stored, BackendPolicyState.class));
        return next == null ? null : new Transition(next.state(), record(next.state(), next.event()));
    }

    @Override
    public synchronized AuditEvent record(BackendPolicyState state, AuditEvent event) {
        if (state != null) {
            states.put(state.backendId(), json.writeValueAsString(state));
        }
        return append(event);
    }

    /** Stores a model's fallback chain ({@code backends} null removes the override) and its event. */
    @Override
    public synchronized AuditEvent recordRoute(String model, List<String> backends, AuditEvent event) {
        if (backends == null) {
            routes.remove(model);
        } else {
            routes.put(model, json.writeValueAsString(backends));
        }
        return append(event);
    }

    private AuditEvent append(AuditEvent event) {
        Long last = journal.lastKey();
        AuditEvent numbered = event.withSeq(last == null ? 1 : last + 1);
        journal.put(numbered.seq(), json.writeValueAsString(numbered));
        store.commit();
        store.sync();
        return numbered;
    }

    @Override
    public synchronized long eventCount() {
        return journal.sizeAsLong();
    }

    /** Up to {@code limit} events, newest first, skipping the {@code skip} newest. */
    @Override
    public synchronized List<AuditEvent> newestEvents(long skip, int limit) {
        List<AuditEvent> result = new ArrayList<>();
        Long last = journal.lastKey();
        // Sequence numbers have no gaps, so the page starts at a computed key instead of a walk.
        for (long key = last == null ? 0 : last - skip; key >= 1 && result.size() < limit; key--) {
            result.add(json.readValue(journal.get(key), AuditEvent.class));
        }
        return result;
    }

    /** Every event, oldest first. */
    @Override
    public synchronized List<AuditEvent> allEvents() {
        List<AuditEvent> result = new ArrayList<>();
        journal.values().forEach(text -> result.add(json.readValue(text, AuditEvent.class)));
        return result;
    }

    /** One process holds the file, so a lease only has to exclude this process's own jobs. */
    @Override
    public synchronized boolean tryLease(String name, String holder, Duration ttl) {
        Lease current = leases.get(name);
        Instant now = Instant.now();
        if (current != null && !current.holder().equals(holder) && current.until().isAfter(now)) {
            return false;
        }
        leases.put(name, new Lease(holder, now.plus(ttl)));
        return true;
    }

    @Override
    public synchronized void releaseLease(String name, String holder) {
        leases.computeIfPresent(name, (k, lease) -> lease.holder().equals(holder) ? null : lease);
    }

    @Override
    public Status status() {
        return new Status("embedded", true, null, null);
    }

    @Override
    public synchronized void close() {
        if (!store.isClosed()) {
            store.close();
        }
    }
}
