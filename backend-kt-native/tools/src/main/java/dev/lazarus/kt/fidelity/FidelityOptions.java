package dev.lazarus.kt.fidelity;

import java.util.Objects;

/**
 * How a measurement runs.
 *
 * @param tokens      greedy tokens the oracle generates per prompt (the positions scored)
 * @param topLogprobs oracle candidates per position whose logprobs are compared ({@code n_probs})
 * @param forcing     how the engine is teacher-forced on the oracle's path
 * @param freeRunning with {@link Forcing#ONE_PASS}, also run the engine's own greedy continuation to find where it
 *                    leaves the oracle's (up to {@code tokens} decode steps per prompt); {@link Forcing#STEPWISE}
 *                    reports it anyway, at no cost
 */
public record FidelityOptions(int tokens, int topLogprobs, Forcing forcing, boolean freeRunning) {

    public static final int DEFAULT_TOKENS = 64;
    public static final int DEFAULT_TOP_LOGPROBS = 5;

    public FidelityOptions {
        if (tokens < 1) {
            throw new IllegalArgumentException("tokens must be ≥ 1, got " + tokens);
        }
        if (topLogprobs < 1) {
            throw new IllegalArgumentException("topLogprobs must be ≥ 1, got " + topLogprobs);
        }
        Objects.requireNonNull(forcing, "forcing");
    }

    /** 64 tokens, top-5, stepwise teacher forcing. */
    public static FidelityOptions defaults() {
        return new FidelityOptions(DEFAULT_TOKENS, DEFAULT_TOP_LOGPROBS, Forcing.STEPWISE, false);
    }

    public FidelityOptions withTokens(int n) {
        return new FidelityOptions(n, topLogprobs, forcing, freeRunning);
    }

    public FidelityOptions withForcing(Forcing f) {
        return new FidelityOptions(tokens, topLogprobs, f, freeRunning);
    }

    public FidelityOptions withFreeRunning(boolean on) {
        return new FidelityOptions(tokens, topLogprobs, forcing, on);
    }
}
