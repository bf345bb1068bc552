package dev.lazarus.kt.grammar;

/**
 * A grammar ready to constrain one model's sampling: its automaton and token masks over that model's vocabulary,
 * shared by every sequence that uses the same grammar (so what one sequence learned, the next one reuses).
 * Each sequence gets its own {@link #matcher()}.
 */
public final class CompiledGrammar {

    private final String source;
    final GrammarAutomaton automaton;
    final TokenMasks masks;

    public CompiledGrammar(String source, Grammar grammar, VocabIndex vocab) {
        this.source = source;
        this.automaton = new GrammarAutomaton(grammar);
        this.masks = new TokenMasks(automaton, vocab);
    }

    /** The GBNF text it was built from. */
    public String source() {
        return source;
    }

    /** A matcher at the grammar's start, for one sequence. */
    public GrammarMatcher matcher() {
        return new GrammarMatcher(this);
    }
}
