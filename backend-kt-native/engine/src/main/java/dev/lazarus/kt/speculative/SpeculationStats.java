package dev.lazarus.kt.speculative;

import dev.lazarus.backend.api.SpeculativeDecodingView.Counts;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * What speculative decoding achieved: draft tokens verified and accepted, and tokens emitted per decode step of a
 * sequence (1 without an accepted draft). Counted by the engine thread, read by any.
 */
public final class SpeculationStats {

    private final LongAdder drafted = new LongAdder();
    private final LongAdder accepted = new LongAdder();
    private final LongAdder steps = new LongAdder();
    private final LongAdder decoded = new LongAdder();

    /** One decode step of one sequence: {@code draft} tokens verified, {@code acceptedTokens} of them taken, {@code emitted} tokens out. */
    public void step(int draft, int acceptedTokens, int emitted) {
        drafted.add(draft);
        accepted.add(acceptedTokens);
        steps.increment();
        decoded.add(emitted);
    }

    public Counts counts(String type) {
        return new Counts(type, drafted.sum(), accepted.sum(), steps.sum(), decoded.sum());
    }

    /** For {@code /v1/models} meta: the counts, and the ratios once there is something to divide. */
    public static Map<String, Object> facts(Counts counts) {
        Map<String, Object> facts = new LinkedHashMap<>();
        facts.put("type", counts.type());
        facts.put("drafted_tokens", counts.draftedTokens());
        facts.put("accepted_tokens", counts.acceptedTokens());
        facts.put("decode_steps", counts.decodeSteps());
        facts.put("decoded_tokens", counts.decodedTokens());
        if (counts.draftedTokens() > 0) {
            facts.put("acceptance_rate", Math.round(counts.acceptanceRate() * 1e4) / 1e4);
        }
        if (counts.decodeSteps() > 0) {
            facts.put("tokens_per_step", Math.round(counts.tokensPerStep() * 1e4) / 1e4);
        }
        return facts;
    }
}
