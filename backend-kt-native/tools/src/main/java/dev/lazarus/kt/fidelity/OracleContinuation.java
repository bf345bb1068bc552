package dev.lazarus.kt.fidelity;

import java.util.List;
import java.util.Set;

/**
 * The oracle's greedy continuation of one prompt: the chosen token ids, the top candidates it reported for each
 * of them (an entry is null where it reported none: llama-server leaves out tokens that end inside a UTF-8
 * character) and the tokens it banned to honour {@code ignore_eos} (its argmax never picks them, so the engine's
 * must not either).
 */
public record OracleContinuation(int[] tokens, List<List<TokenLogprob>> top, Set<Integer> banned) {

    public OracleContinuation {
        if (top.size() != tokens.length) {
            throw new IllegalArgumentException(tokens.length + " tokens but " + top.size() + " candidate lists");
        }
        banned = Set.copyOf(banned);
    }
}
