package dev.lazarus.kt.model;

import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * How often each expert of each MoE block was chosen: the input of frequency-based expert
 * placement, and what a batching test checks (one expert computation per step, not per token).
 */
public final class ExpertUsage {

    private final int experts;
    private final int block;
    private final AtomicLongArray tokens;
    private final AtomicLongArray computations;

    public ExpertUsage(int blocks, int experts) {
        this(experts, -1, new AtomicLongArray(blocks * experts), new AtomicLongArray(blocks * experts));
    }

    private ExpertUsage(int experts, int block, AtomicLongArray tokens, AtomicLongArray computations) {
        this.experts = experts;
        this.block = block;
        this.tokens = tokens;
        this.computations = computations;
    }

    /** A view that records for one block. */
    ExpertUsage forBlock(int b) {
        return new ExpertUsage(experts, b, tokens, computations);
    }

    void record(List<Integer> active, List<List<Integer>> tokensOf) {
        for (int e : active) {
            tokens.addAndGet(block * experts + e, tokensOf.get(e).size());
            computations.incrementAndGet(block * experts + e);
        }
    }

    /** Records one token routed to {@code experts} of {@code block} (a path that routes token by token). */
    public void recordToken(int block, int[] experts) {
        for (int e : experts) {
            tokens.incrementAndGet(block * this.experts + e);
            computations.incrementAndGet(block * this.experts + e);
        }
    }

    /** Tokens routed to an expert so far. */
    public long tokens(int block, int expert) {
        return tokens.get(block * experts + expert);
    }

    /** Times an expert's weights were applied (once per forward pass in which any token chose it). */
    public long computations(int block, int expert) {
        return computations.get(block * experts + expert);
    }
}
