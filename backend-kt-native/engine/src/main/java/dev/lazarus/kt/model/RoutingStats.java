package dev.lazarus.kt.model;

import java.util.concurrent.atomic.LongAdder;

/**
 * How often the router chose each expert: per (slot, expert), the tokens routed to it and the
 * computations (forward passes that ran it, however many tokens it took in each) since start, plus
 * token counts carried over from a saved file. The model records every MoE block's routing here,
 * with or without expert placement; placement reads it to rank experts. Recording is a
 * {@link LongAdder} increment per active expert (no shared cache line under contention), reading
 * sums them. {@link #takeWindow} gives the dynamic strategy what changed since it last looked,
 * decayed into a running score so a burst fades. Slots are the MoE blocks in order (deepseek2's
 * leading dense blocks have none).
 */
public final class RoutingStats {

    /** Weight of the previous windows in the dynamic score: half-life of one rebalance interval. */
    public static final double DECAY = 0.5;

    private final int layers;
    private final int experts;
    private final LongAdder[] live;
    private final LongAdder[] computations;
    private final long[] prior;
    private final long[] seen;
    private final double[] recent;

    public RoutingStats(int layers, int experts) {
        this.layers = layers;
        this.experts = experts;
        this.live = adders(layers * experts);
        this.computations = adders(layers * experts);
        this.prior = new long[layers * experts];
        this.seen = new long[live.length];
        this.recent = new double[live.length];
    }

    private static LongAdder[] adders(int n) {
        LongAdder[] out = new LongAdder[n];
        for (int i = 0; i < n; i++) {
            out[i] = new LongAdder();
        }
        return out;
    }

    /**
     * Takes token counts saved by an earlier run, [slot × experts + expert], as the starting point:
     * they add to the live counts and seed the dynamic score until live traffic replaces them.
     * Meant for start-up, before traffic.
     */
    public synchronized void seed(long[] saved) {
        if (saved.length != prior.length) {
            throw new IllegalArgumentException("saved counts for " + saved.length + " experts, model has " + prior.length);
        }
        for (int i = 0; i < saved.length; i++) {
            prior[i] = saved[i];
            recent[i] = saved[i];
        }
    }

    /**
     * Forgets this run's counts (saved counts stay): what a warm-up routed is not traffic. Meant for start-up,
     * before traffic, like {@link #seed}: an increment racing the reset may be lost.
     */
    public synchronized void forgetLive() {
        for (int i = 0; i < live.length; i++) {
            live[i].reset();
            computations[i].reset();
            seen[i] = 0;
            recent[i] = prior[i];
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
        int i = slot * experts + expert;
        live[i].add(tokens);
        computations[i].increment();
    }

    /** Tokens routed to an expert: saved counts plus this run's. */
    public long count(int slot, int expert) {
        int i = slot * experts + expert;
        return prior[i] + live[i].sum();
    }

    /** Forward passes of this run that computed the expert (once per pass, whatever the batch). */
    public long computations(int slot, int expert) {
        return computations[slot * experts + expert].sum();
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
}
