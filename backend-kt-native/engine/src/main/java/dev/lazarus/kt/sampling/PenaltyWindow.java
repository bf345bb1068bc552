package dev.lazarus.kt.sampling;

/**
 * The last {@code capacity} tokens of a sequence and how often each occurs among them: what
 * {@link Penalties} look at. A ring that grows on demand up to its capacity, so a window as large
 * as the context costs only what the sequence has used. Not thread-safe.
 */
final class PenaltyWindow {

    private final int capacity;
    private final int[] counts;
    private int[] ring; // full when size == capacity == ring.length
    private int start;
    private int size;

    PenaltyWindow(int capacity, int vocabSize) {
        this.capacity = capacity;
        this.counts = new int[vocabSize];
        this.ring = new int[Math.min(capacity, 16)];
    }

    void add(int token) {
        if (capacity == 0 || token < 0 || token >= counts.length) {
            return;
        }
        if (size == capacity) {
            counts[ring[start]]--;
            ring[start] = token;
            start = (start + 1) % ring.length;
        } else {
            if (size == ring.length) {
                grow();
            }
            ring[(start + size) % ring.length] = token;
            size++;
        }
        counts[token]++;
    }

    /** Applies the penalties to the logits of every token in the window, once per distinct token. */
    void apply(float[] logits, Penalties p) {
        for (int i = 0; i < size; i++) {
            int token = ring[(start + i) % ring.length];
            int count = counts[token];
            if (count <= 0) {
                continue; // already penalised (marked below)
            }
            float logit = logits[token];
            logit = logit <= 0 ? logit * p.repeat() : logit / p.repeat();
            logits[token] = logit - (count * p.frequency() + p.presence());
            counts[token] = -count;
        }
        for (int i = 0; i < size; i++) {
            int token = ring[(start + i) % ring.length];
            counts[token] = Math.abs(counts[token]);
        }
    }

    private void grow() {
        int[] bigger = new int[(int) Math.min(capacity, 2L * ring.length)];
        for (int i = 0; i < size; i++) {
            bigger[i] = ring[(start + i) % ring.length];
        }
        ring = bigger;
        start = 0;
    }
}
