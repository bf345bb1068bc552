package dev.lazarus.kt.grammar;

import java.util.ArrayList;
import java.util.List;

/**
 * Which tokens a grammar state allows, as llama.cpp's {@code llama_grammar_reject_candidates} decides it, computed
 * with one walk of the vocabulary trie per state (a prefix the grammar refuses prunes every token below it) and
 * remembered per state. Also decides single tokens exactly, for the sampled token checked before any mask is built
 * and for tokens that must finish a pending UTF-8 character.
 */
final class TokenMasks {

    /** Memory for remembered masks per grammar; past it they are dropped and built again as needed. */
    private static final long MASK_BUDGET_BYTES = 32L << 20;

    private final GrammarAutomaton automaton;
    private final VocabIndex vocab;
    private final Grammar g;
    private final List<GrammarState> cached = new ArrayList<>();

    TokenMasks(GrammarAutomaton automaton, VocabIndex vocab) {
        this.automaton = automaton;
        this.vocab = vocab;
        this.g = automaton.grammar;
    }

    VocabIndex vocab() {
        return vocab;
    }

    /** The allowed tokens as a bit set over the vocabulary; the caller must not modify it. */
    synchronized long[] allowed(GrammarState state, long pending) {
        if (pending != Utf8Decode.NONE) {
            return pendingMask(state, pending);
        }
        if (state.mask == null) {
            long[] mask = new long[(vocab.vocabSize + 63) >>> 6];
            walk(0, state, mask);
            allowEog(state, mask);
            if ((long) cached.size() * mask.length * Long.BYTES >= MASK_BUDGET_BYTES) {
                cached.forEach(s -> s.mask = null);
                cached.clear();
            }
            state.mask = mask;
            cached.add(state);
        }
        return state.mask;
    }

    /** Whether the grammar allows {@code token} next. */
    boolean allows(GrammarState state, long pending, int token) {
        if (vocab.eog[token]) {
            return state.canEnd;
        }
        byte[] piece = vocab.pieces[token];
        if (piece.length == 0 || piece[0] == 0) {
            return false;
        }
        Utf8Decode d = Utf8Decode.of(piece, pending);
        return !d.invalid() && accepts(state, d.codePoints(), 0, d.pending(), token);
    }

    /** The exact rule for one decoded token from {@code at}: some stack consumes it all, ending as allowed. */
    private boolean accepts(GrammarState state, int[] cps, int at, long tail, int token) {
        if (at == cps.length) {
            return endsAllowed(state, tail);
        }
        if (state.tokenTops) {
            for (Stack s : state.stacks) {
                if (!s.isEmpty() && automaton.matchesToken(s.pos, token)) {
                    return true; // a token element decides by id alone, whatever text remains
                }
            }
        }
        GrammarState next = automaton.next(state, cps[at]);
        return next != GrammarAutomaton.DEAD && accepts(next, cps, at + 1, tail, token);
    }

    /** A token whose complete characters are consumed, in {@code state}: allowed unless it ends in a refused partial. */
    private boolean endsAllowed(GrammarState state, long tail) {
        if (tail == Utf8Decode.NONE) {
            return true;
        }
        int value = (int) (tail >>> 8);
        int remain = (int) (tail & 0xFF);
        for (Stack s : state.stacks) {
            if (!s.isEmpty() && Element.isCharStart(g.types[s.pos]) && g.matchPartial(s.pos, value, remain)) {
                return true;
            }
        }
        return false;
    }

    private void walk(int node, GrammarState state, long[] mask) {
        for (int i = vocab.endFrom[node]; i < vocab.endTo[node]; i++) {
            if (endsAllowed(state, vocab.orderPending[i])) {
                set(mask, vocab.order[i]);
            }
        }
        if (state.tokenTops) {
            for (Stack s : state.stacks) {
                if (!s.isEmpty() && Element.isToken(g.types[s.pos])) {
                    tokenElement(node, s.pos, mask);
                }
            }
        }
        for (int child = vocab.firstChild[node]; child >= 0; child = vocab.nextSibling[child]) {
            GrammarState next = automaton.next(state, vocab.nodeCp[child]);
            if (next != GrammarAutomaton.DEAD) {
                walk(child, next, mask);
            }
        }
    }

    /** A token element on top: tokens with text left below this node are allowed by id alone. */
    private void tokenElement(int node, int pos, long[] mask) {
        int from = vocab.endTo[node];
        int to = vocab.subtreeTo[node];
        int id = g.values[pos];
        if (g.types[pos] == Element.TOKEN) {
            for (int i = from; i < to; i++) {
                if (vocab.order[i] == id) {
                    set(mask, id);
                }
            }
        } else {
            for (int i = from; i < to; i++) {
                if (vocab.order[i] != id) {
                    set(mask, vocab.order[i]);
                }
            }
        }
    }

    /** With a character pending only tokens starting with a continuation byte can be allowed: checked one by one. */
    private long[] pendingMask(GrammarState state, long pending) {
        long[] mask = new long[(vocab.vocabSize + 63) >>> 6];
        for (int token : vocab.continuationTokens) {
            if (allows(state, pending, token)) {
                set(mask, token);
            }
        }
        allowEog(state, mask);
        return mask;
    }

    private void allowEog(GrammarState state, long[] mask) {
        if (state.canEnd) {
            for (int id = 0; id < vocab.vocabSize; id++) {
                if (vocab.eog[id]) {
                    set(mask, id);
                }
            }
        }
    }

    private static void set(long[] mask, int id) {
        mask[id >>> 6] |= 1L << id;
    }
}
