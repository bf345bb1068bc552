package dev.lazarus.kt.speculative;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * What speculative decoding achieved: draft tokens verified and accepted, and tokens emitted per decode step of a
 * sequence (1 without speculation). Counted by the engine thread, read by any.
 */
public final class SpeculationStats {

    private final LongAdder drafted = new LongAdder();
    private final LongAdder accepted = new LongAdder();
    private final LongAdder steps = new LongAdder();
    private final LongAdder generated = new LongAdder();

    /** One decode step of one sequence: {@code draft} tokens verified, {@code acceptedTokens} of them taken, {@code emitted} tokens out. */
    public void step(int draft, int acceptedTokens, int emitted) {
        drafted.add(draft);
        accepted.add(acceptedTokens);
        steps.increment();
        generated.add(emitted);
    }

    public long draftedTokens() {
        return drafted.sum();
    }

    public long acceptedTokens() {
        return accepted.sum();
    }

    /** Accepted of the drafted tokens; NaN before any draft. */
    public double acceptanceRate() {
        long d = drafted.sum();
        return d == 0 ? Double.NaN : (double) accepted.sum() / d;
    }

    /** Tokens emitted per decode step of a sequence; NaN before the first step. */
    public double tokensPerStep() {
        long s = steps.sum();
        return s == 0 ? Double.NaN : (double) generated.sum() / s;
    }

    /** For {@code /v1/models} meta: the counts, and the ratios once there is something to divide. */
    public Map<String, Object> facts(String type) {
        Map<String, Object> facts = new LinkedHashMap<>();
        facts.put("type", type);
        facts.put("drafted_tokens", draftedTokens());
        facts.put("accepted_tokens", acceptedTokens());
        double rate = acceptanceRate();
        double perStep = tokensPerStep();
        if (!Double.isNaN(rate)) {
            facts.put("acceptance_rate", Math.round(rate * 1e4) / 1e4);
        }
        if (!Double.isNaN(perStep)) {
            facts.put("tokens_per_step", Math.round(perStep * 1e4) / 1e4);
        }
        return facts;
    }
}
