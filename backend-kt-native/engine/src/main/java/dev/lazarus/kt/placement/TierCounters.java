package dev.lazarus.kt.placement;

import java.util.concurrent.atomic.LongAdder;

/** Expert computations and expert weight bytes read, per tier: the hit rates the admin view shows. */
final class TierCounters {

    private final LongAdder[] computations = adders();
    private final LongAdder[] bytes = adders();

    private static LongAdder[] adders() {
        LongAdder[] a = new LongAdder[Tier.values().length];
        for (int i = 0; i < a.length; i++) {
            a[i] = new LongAdder();
        }
        return a;
    }

    /** Back to zero (after the engine's warm-up, before traffic). */
    void reset() {
        for (int i = 0; i < computations.length; i++) {
            computations[i].reset();
            bytes[i].reset();
        }
    }

    void record(Tier tier, long expertBytes) {
        computations[tier.ordinal()].increment();
        bytes[tier.ordinal()].add(expertBytes);
    }

    long computations(Tier tier) {
        return computations[tier.ordinal()].sum();
    }

    long bytes(Tier tier) {
        return bytes[tier.ordinal()].sum();
    }

    /** The share of expert weight bytes read from {@code tier}; 0 before any computation. */
    double byteHitRate(Tier tier) {
        long all = 0;
        for (Tier t : Tier.values()) {
            all += bytes(t);
        }
        return all == 0 ? 0 : (double) bytes(tier) / all;
    }
}
