package dev.lazarus.gateway.api.responses;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import tools.jackson.databind.node.ObjectNode;

/**
 * Responses kept in this gateway's memory: at most {@code maxEntries} (the oldest go first), each for
 * {@code ttl} after it was stored. The single-machine default; replicas that must share them use the
 * policy store's database.
 */
final class InMemoryResponseStore implements ResponseStore {

    private record Entry(StoredResponse response, Instant expires) {}

    private final int maxEntries;
    private final Duration ttl;
    private final Clock clock;
    /** Insertion order: the eldest entry is the first to expire and the first to go when full. */
    private final LinkedHashMap<String, Entry> entries = new LinkedHashMap<>();

    InMemoryResponseStore(int maxEntries, Duration ttl, Clock clock) {
        this.maxEntries = maxEntries;
        this.ttl = ttl;
        this.clock = clock;
    }

    @Override
    public synchronized void put(StoredResponse response) {
        if (maxEntries == 0) {
            return;
        }
        evictExpired();
        entries.remove(response.id());
        entries.put(response.id(), new Entry(response, clock.instant().plus(ttl)));
        while (entries.size() > maxEntries) {
            entries.pollFirstEntry();
        }
    }

    @Override
    public synchronized Optional<StoredResponse> get(String id) {
        evictExpired();
        Entry entry = entries.get(id);
        return entry == null ? Optional.empty() : Optional.of(entry.response());
    }

    @Override
    public synchronized boolean delete(String id) {
        evictExpired();
        return entries.remove(id) != null;
    }

    @Override
    public synchronized Optional<ObjectNode> item(String itemId) {
        evictExpired();
        for (Entry entry : entries.sequencedValues().reversed()) {
            Optional<ObjectNode> item = entry.response().item(itemId);
            if (item.isPresent()) {
                return item;
            }
        }
        return Optional.empty();
    }

    private void evictExpired() {
        Instant now = clock.instant();
        for (Iterator<Map.Entry<String, Entry>> it = entries.entrySet().iterator(); it.hasNext(); ) {
            if (it.next().getValue().expires().isAfter(now)) {
                return;
            }
            it.remove();
        }
    }
}
