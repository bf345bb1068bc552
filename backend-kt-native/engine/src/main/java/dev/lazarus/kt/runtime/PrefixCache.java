package dev.lazarus.kt.runtime;

import dev.lazarus.kt.model.KvCache;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Caches of finished sequences, kept so a new prompt that starts with the same tokens (the same
 * system prompt, the previous turns of a chat) copies those positions instead of recomputing them.
 * Least recently used entries go first. Used by the scheduler thread only.
 */
final class PrefixCache {

    /** A reusable prefix: the cache to copy from and how many leading positions match. */
    record Hit(KvCache cache, int positions) {}

    private record Entry(int[] tokens, KvCache cache) {}

    private final int capacity;
    private final LinkedHashMap<Long, Entry> entries = new LinkedHashMap<>(16, 0.75f, true);
    private long nextKey;

    PrefixCache(int capacity) {
        this.capacity = capacity;
    }

    /**
     * The longest cached prefix of {@code prompt}, leaving at least one prompt token to compute
     * (its logits are needed); null when nothing useful matches.
     */
    Hit lookup(int[] prompt) {
        Entry best = null;
        long bestKey = -1;
        int bestLength = 0;
        for (Map.Entry<Long, Entry> e : entries.entrySet()) {
            int n = commonPrefix(e.getValue().tokens(), prompt);
            if (n > bestLength) {
                best = e.getValue();
                bestKey = e.getKey();
                bestLength = n;
            }
        }
        if (best == null) {
            return null;
        }
        entries.get(bestKey); // touch: access order makes it most recently used
        return new Hit(best.cache(), Math.min(bestLength, prompt.length - 1));
    }

    void offer(int[] tokens, KvCache cache) {
        if (capacity == 0 || tokens.length == 0) {
            return;
        }
        // A cache whose tokens another entry already extends adds nothing.
        for (Iterator<Entry> it = entries.values().iterator(); it.hasNext(); ) {
            Entry e = it.next();
            if (commonPrefix(e.tokens(), tokens) == tokens.length) {
                return;
            }
            if (commonPrefix(e.tokens(), tokens) == e.tokens().length) {
                it.remove();
            }
        }
        entries.put(nextKey++, new Entry(tokens, cache));
        while (entries.size() > capacity) {
            entries.remove(entries.keySet().iterator().next());
        }
    }

    int size() {
        return entries.size();
    }

    private static int commonPrefix(int[] a, int[] b) {
        int n = Math.min(a.length, b.length);
        int i = 0;
        while (i < n && a[i] == b[i]) {
            i++;
        }
        return i;
    }
}
