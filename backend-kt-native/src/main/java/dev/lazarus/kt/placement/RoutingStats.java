package dev.lazarus.kt.placement;

import java.util.concurrent.atomic.LongAdder;

/**
 * Activation counts per (slot, expert): tokens routed to each expert since start, plus counts
 * carried over from a saved file. Recording is a {@link LongAdder} increment per active expert (no
 * shared cache line under contention), reading sums them. {@link #takeWindow} gives the dynamic
 * strategy what changed since it last looked, decayed into a running score so a burst fades.
 */
public final class RoutingStats {

    /** Weight of the previous windows in the dynamic score: half-life of one rebalance interval. */
    static final double DECAY = 0.5;

    private final int layers;
    private final int experts;
    private final LongAdder[] live;
    private final long[] prior;
    private final long[] seen;
    private final double[] recent;

    public RoutingStats(int layers, int experts) {
        this(layers, experts, new long[layers * experts]);
    }

    RoutingStats(int layers, int experts, long[] prior) {
        if (prior.length != layers * experts) {
            throw new IllegalArgumentException("prior counts for " + prior.length + " experts, model has " + layers * experts);
        }
        this.layers = layers;
        this.experts = experts;
        this.live = new LongAdder[layers * experts];
        for (int i = 0; i < live.length; i++) {
            live[i] = new LongAdder();
        }
        this.prior = prior.clone();
        this.seen = new long[live.length];
        this.recent = new double[live.length];
        for (int i = 0; i < prior.length; i++) {
            recent[i] = prior[i]; // saved counts seed the dynamic score until live traffic replaces them
        }
    }

    public int layers() {
        return layers;
    }

    public int experts() {
        return experts;
    }

    /** {@code tokens} tokens were routed to {@code expert} of layer {@code slot} in one forward pass. */
    public void record(int slot, int expert, int tokens) {
        live[slot * experts + expert].add(tokens);
    }

    /** Tokens routed to an expert: saved counts plus this run's. */
    public long count(int slot, int expert) {
        int i = slot * experts + expert;
        return prior[i] + live[i].sum();
    }

    /** All counts as [slot][expert], saved plus live. */
    public long[][] counts() {
        long[][] out = new long[layers][experts];
        for (int s = 0; s < layers; s++) {
            for (int e = 0; e < experts; e++) {
                out[s][e] = count(s, e);
            }
        }
        return out;
    }

    /** The counts as placement scores. */
    public double[][] totals() {
        double[][] out = new double[layers][experts];
        for (int s = 0; s < layers; s++) {
            for (int e = 0; e < experts; e++) {
                out[s][e] = count(s, e);
            }
        }
        return out;
    }

    /**
     * The dynamic score: each call folds the counts recorded since the previous call into a decayed
     * running sum ({@code score = score·DECAY + new}) and returns it. Called by one rebalancer at a time.
     */
    public synchronized double[][] takeWindow() {
        double[][] out = new double[layers][experts];
        for (int i = 0; i < live.length; i++) {
            long now = live[i].sum();
            recent[i] = recent[i] * DECAY + (now - seen[i]);
            seen[i] = now;
            out[i / experts][i % experts] = recent[i];
        }
        return out;
    }

    long[] flatCounts() {
        long[] out = new long[live.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = prior[i] + live[i].sum();
        }
        return out;
    }
}
