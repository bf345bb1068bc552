package dev.lazarus.kt.grammar;

/** Whether a grammar matches a whole text, code point by code point through its automaton (test helper). */
final class TextMatch {

    private TextMatch() {}

    static boolean matches(Grammar g, String text) {
        GrammarAutomaton a = new GrammarAutomaton(g);
        GrammarState s = a.initial();
        for (int cp : text.codePoints().toArray()) {
            s = a.next(s, cp);
            if (s == GrammarAutomaton.DEAD) {
                return false;
            }
        }
        return s.canEnd;
    }
}
