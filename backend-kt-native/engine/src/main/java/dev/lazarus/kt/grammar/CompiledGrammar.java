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
    /** Where each matcher starts: the grammar's start, or past a text fed to it ({@link #after}). */
    final GrammarState start;

    public CompiledGrammar(String source, Grammar grammar, VocabIndex vocab) {
        this.source = source;
        this.automaton = new GrammarAutomaton(grammar);
        this.masks = new TokenMasks(automaton, vocab);
        this.start = automaton.initial();
    }

    private CompiledGrammar(CompiledGrammar from, GrammarState start) {
        this.source = from.source;
        this.automaton = from.automaton;
        this.masks = from.masks;
        this.start = start;
    }

    /**
     * This grammar with its matchers starting past {@code text}, as llama-server feeds a chat answer's grammar the
     * generation prompt before the first token (automaton and masks shared with this one).
     *
     * @throws GrammarException when the grammar does not allow {@code text}
     */
    public CompiledGrammar after(String text) {
        GrammarState s = start;
        int[] cps = text.codePoints().toArray();
        for (int i = 0; i < cps.length && s != GrammarAutomaton.DEAD; i++) {
            s = automaton.next(s, cps[i]);
        }
        if (s == GrammarAutomaton.DEAD) {
            throw new GrammarException("the grammar does not allow the generation prompt " + text);
        }
        return new CompiledGrammar(this, s);
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
