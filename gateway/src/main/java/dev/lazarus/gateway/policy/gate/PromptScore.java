package dev.lazarus.gateway.policy.gate;

import dev.lazarus.backend.api.openai.Logprobs.TokenLogprob;
import dev.lazarus.backend.api.openai.Logprobs.TopLogprob;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * One prompt's positions as they are scored: top-1 agreement and |Δ logprob| of the oracle's top-5.
 * Tokens are compared by their bytes (the text of a token that is part of a UTF-8 character is not
 * unique), so the two backends must share a vocabulary, as a candidate for the same model does.
 */
final class PromptScore {

    static final int TOP = 5;

    private int positions;
    private int agreed;
    private Integer firstDivergence;
    private int deltas;
    private double deltaSum;
    private double deltaMax;

    /**
     * @param oracle    the oracle's greedy token at this position, with its top alternatives
     * @param candidate the candidate's answer at the same position; null when it gave no token (it ended)
     */
    void add(int position, TokenLogprob oracle, TokenLogprob candidate) {
        positions++;
        byte[] expected = bytes(oracle.token(), oracle.bytes());
        if (candidate != null && Arrays.equals(expected, mostLikely(candidate))) {
            agreed++;
        } else if (firstDivergence == null) {
            firstDivergence = position;
        }
        if (candidate == null || oracle.topLogprobs() == null) {
            return;
        }
        for (TopLogprob o : oracle.topLogprobs().stream().limit(TOP).toList()) {
            byte[] token = bytes(o.token(), o.bytes());
            Double theirs = logprobOf(candidate, token);
            if (theirs != null) {
                double delta = Math.abs(theirs - o.logprob());
                deltas++;
                deltaSum += delta;
                deltaMax = Math.max(deltaMax, delta);
            }
        }
    }

    OracleAgreement.PromptAgreement result(String prompt, String oracleText, String note) {
        return new OracleAgreement.PromptAgreement(prompt, oracleText, positions, agreed, firstDivergence,
                deltas == 0 ? null : deltaSum / deltas, deltas == 0 ? null : deltaMax, deltas, note);
    }

    /** The candidate's most likely token: the best of its alternatives, else the token it chose. */
    private static byte[] mostLikely(TokenLogprob candidate) {
        List<TopLogprob> top = candidate.topLogprobs();
        if (top == null || top.isEmpty()) {
            return bytes(candidate.token(), candidate.bytes());
        }
        TopLogprob best = top.getFirst();
        for (TopLogprob t : top) {
            if (t.logprob() > best.logprob()) {
                best = t;
            }
        }
        return bytes(best.token(), best.bytes());
    }

    /** The candidate's logprob of {@code token}, when it lists it (among its alternatives or as its choice). */
    private static Double logprobOf(TokenLogprob candidate, byte[] token) {
        if (candidate.topLogprobs() != null) {
            for (TopLogprob t : candidate.topLogprobs()) {
                if (Arrays.equals(token, bytes(t.token(), t.bytes()))) {
                    return t.logprob();
                }
            }
        }
        return Arrays.equals(token, bytes(candidate.token(), candidate.bytes())) ? candidate.logprob() : null;
    }

    static byte[] bytes(String token, List<Integer> bytes) {
        if (bytes == null || bytes.isEmpty()) {
            return token == null ? new byte[0] : token.getBytes(StandardCharsets.UTF_8);
        }
        byte[] out = new byte[bytes.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) bytes.get(i).intValue();
        }
        return out;
    }
}
