package dev.lazarus.kt.runtime;

import dev.lazarus.kt.model.KvCache;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Caches of finished sequences, kept so a new prompt that starts with the same tokens (the same
 * system prompt, the previous turns of a chat) copies those positions instead of recomputing them.
 * A cache with recurrent state (gated DeltaNet blocks) is a checkpoint of its sequence's end: it serves
 * only prompts that extend all of its tokens (a chat's next turn, a resumed stream).
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
            if (e.getValue().cache().hasRecurrentState()
                    && (n != e.getValue().tokens().length || n >= prompt.length)) {
                // a recurrent state is the state after all of the entry's tokens: usable only whole, and only
                // when at least one prompt token remains to compute
                continue;
            }
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
        // A cache whose tokens another entry already extends adds nothing, unless its state is recurrent: then
        // each entry serves only its own end, and only an equal one is redundant.
        boolean whole = cache.hasRecurrentState();
        for (Iterator<Entry> it = entries.values().iterator(); it.hasNext(); ) {
            Entry e = it.next();
            int common = commonPrefix(e.tokens(), tokens);
            if (common == tokens.length && (!whole || e.tokens().length == tokens.length)) {
                return;
            }
            if (common == e.tokens().length && (!whole || e.tokens().length == tokens.length)) {
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
