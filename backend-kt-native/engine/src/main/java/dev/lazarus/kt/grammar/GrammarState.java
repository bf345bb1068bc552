package dev.lazarus.kt.grammar;

import java.util.HashMap;
import java.util.Map;

/**
 * A set of stacks the matcher may be in (llama.cpp's {@code stacks}), interned by {@link GrammarAutomaton}: the
 * state after each code point is looked up once and remembered, as is the set of tokens the state allows.
 */
final class GrammarState {

    final Stack[] stacks;
    final int id;
    /** Some stack is empty: the grammar may end, so end-of-generation tokens are allowed. */
    final boolean canEnd;
    /** The next state per ASCII code point; null until looked up ({@link GrammarAutomaton#DEAD} when none). */
    final GrammarState[] ascii = new GrammarState[128];
    final Map<Integer, GrammarState> other = new HashMap<>();
    /** Tokens allowed here with no UTF-8 character pending, as a bit set; null until computed. */
    long[] mask;
    /** Some stack is topped by a token element (rare: only grammars with {@code <token>} references). */
    final boolean tokenTops;

    GrammarState(Stack[] stacks, int id, int[] types) {
        this.stacks = stacks;
        this.id = id;
        boolean tokens = false;
        for (Stack s : stacks) {
            tokens |= !s.isEmpty() && Element.isToken(types[s.pos]);
        }
        this.tokenTops = tokens;
        boolean end = false;
        for (Stack s : stacks) {
            end |= s.isEmpty();
        }
        this.canEnd = end;
    }
}
