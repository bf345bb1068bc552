package dev.lazarus.kt.grammar;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Where one sequence stands in its grammar: the state, and the UTF-8 character a previous token left unfinished.
 * The sampler asks whether a token is allowed, or for the allowed set, and reports each chosen token with
 * {@link #accept}. Not thread-safe: one per sequence.
 */
public final class GrammarMatcher {

    private final CompiledGrammar grammar;
    private GrammarState state;
    private long pending = Utf8Decode.NONE;

    GrammarMatcher(CompiledGrammar grammar) {
        this.grammar = grammar;
        this.state = grammar.start;
    }

    /** Whether the grammar allows {@code token} next (end-of-generation tokens only where it may end). */
    public boolean allows(int token) {
        return grammar.masks.allows(state, pending, token);
    }

    /** Whether the allowed set here is already known, so {@link #mask} and {@link #bestAllowed} build nothing. */
    public boolean maskKnown() {
        return pending == Utf8Decode.NONE && state.mask != null;
    }

    /** Sets the logits of every token the grammar does not allow to -infinity. */
    public void mask(float[] logits) {
        long[] allowed = grammar.masks.allowed(state, pending);
        for (int word = 0; word < allowed.length; word++) {
            long refused = ~allowed[word];
            int base = word << 6;
            while (refused != 0 && base + Long.numberOfTrailingZeros(refused) < logits.length) {
                logits[base + Long.numberOfTrailingZeros(refused)] = Float.NEGATIVE_INFINITY;
                refused &= refused - 1;
            }
        }
    }

    /**
     * The allowed token with the highest logit, the lowest id among equals: what masking and then taking the
     * argmax gives, reading only the allowed tokens' logits. Token 0 when none is allowed.
     */
    public int bestAllowed(float[] logits) {
        long[] allowed = grammar.masks.allowed(state, pending);
        int best = -1;
        float bestLogit = Float.NEGATIVE_INFINITY;
        for (int word = 0; word < allowed.length; word++) {
            long bits = allowed[word];
            int base = word << 6;
            while (bits != 0) {
                int id = base + Long.numberOfTrailingZeros(bits);
                if (best < 0 || logits[id] > bestLogit) {
                    best = id;
                    bestLogit = logits[id];
                }
                bits &= bits - 1;
            }
        }
        return Math.max(best, 0);
    }

    /** Whether the grammar is complete here (an end-of-generation token would be allowed). */
    public boolean canEnd() {
        return state.canEnd;
    }

    /**
     * Moves past a chosen token, as llama.cpp's {@code llama_grammar_accept_impl}.
     *
     * @throws IllegalStateException when the grammar does not allow the token
     */
    public void accept(int token) {
        VocabIndex vocab = grammar.masks.vocab();
        if (vocab.eog[token]) {
            if (!state.canEnd) {
                throw new IllegalStateException("the grammar does not allow the end of generation here");
            }
            return;
        }
        GrammarAutomaton automaton = grammar.automaton;
        Utf8Decode d = Utf8Decode.of(vocab.pieces[token], pending);
        List<Stack> survivors = new ArrayList<>(automaton.afterToken(state, token));
        if (!d.invalid()) {
            GrammarState s = state;
            int[] cps = d.codePoints();
            if (cps.length == 0) {
                for (Stack st : s.stacks) { // nothing complete: the stacks waiting for characters stay
                    if (!st.isEmpty() && Element.isCharStart(automaton.grammar.types[st.pos])) {
                        survivors.add(st);
                    }
                }
            } else {
                for (int i = 0; i < cps.length && s != GrammarAutomaton.DEAD; i++) {
                    s = automaton.next(s, cps[i]);
                }
                survivors.addAll(Arrays.asList(s.stacks));
            }
        }
        GrammarState next = automaton.state(survivors);
        if (next == GrammarAutomaton.DEAD) {
            throw new IllegalStateException("the grammar does not allow token " + token);
        }
        state = next;
        pending = d.invalid() ? Utf8Decode.NONE : d.pending();
    }
}
