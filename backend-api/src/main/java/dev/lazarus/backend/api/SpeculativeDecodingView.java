package dev.lazarus.backend.api;

import java.util.Optional;

/**
 * Implemented by backends that decode speculatively (kt-native with a {@code spec-type}), so the gateway's metrics can
 * show how well the drafts do. Optional: check with {@code backend instanceof SpeculativeDecodingView}.
 */
public interface SpeculativeDecodingView {

    /** Whether the backend is configured to decode speculatively (known before its model loads). */
    boolean decodesSpeculatively();

    /** The counts since start; empty while the model loads or when the backend does not speculate. */
    Optional<Counts> speculativeDecoding();

    /**
     * @param type           the drafter, as llama-server's {@code --spec-type} names it ({@code ngram-simple}, ...)
     * @param draftedTokens  draft tokens the model verified
     * @param acceptedTokens draft tokens it accepted
     * @param decodeSteps    decode steps of a sequence (each one forward pass of the model for that sequence)
     * @param decodedTokens  tokens those steps emitted: with no draft accepted, one per step
     */
    record Counts(String type, long draftedTokens, long acceptedTokens, long decodeSteps, long decodedTokens) {

        /** Accepted of the drafted tokens; NaN before any draft. */
        public double acceptanceRate() {
            return draftedTokens == 0 ? Double.NaN : (double) acceptedTokens / draftedTokens;
        }

        /** Tokens emitted per decode step of a sequence; NaN before the first step. */
        public double tokensPerStep() {
            return decodeSteps == 0 ? Double.NaN : (double) decodedTokens / decodeSteps;
        }
    }
}
