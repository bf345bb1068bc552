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
    /** Tokens allowed here with no UTF-8 character pending, as a bit set; null until computed (or dropped). */
    volatile long[] mask;
    /** Some stack is topped by a token element (rare: only grammars with {@code <token>} references). */
    final boolean tokenTops;
    /** Every class on top treats all non-ASCII code points alike, so one step serves them all ({@link #nonAscii}). */
    final boolean uniformAboveAscii;
    /** The next state for any non-ASCII code point when {@link #uniformAboveAscii}; null until looked up. */
    volatile GrammarState nonAscii;

    GrammarState(Stack[] stacks, int id, int[] types, int[] values) {
        this.stacks = stacks;
        this.id = id;
        boolean tokens = false;
        boolean uniform = true;
        for (Stack s : stacks) {
            tokens |= !s.isEmpty() && Element.isToken(types[s.pos]);
            if (!s.isEmpty() && Element.isCharStart(types[s.pos])) {
                uniform &= asciiOnly(s.pos, types, values);
            }
        }
        this.tokenTops = tokens;
        this.uniformAboveAscii = uniform;
        boolean end = false;
        for (Stack s : stacks) {
            end |= s.isEmpty();
        }
        this.canEnd = end;
    }

    /** Whether the class at {@code pos} names only ASCII characters (ranges open to the top count as none). */
    private static boolean asciiOnly(int pos, int[] types, int[] values) {
        int p = pos;
        do {
            if (types[p] != Element.CHAR_ANY && values[p] >= 128) {
                return false;
            }
            if (types[p + 1] == Element.CHAR_RNG_UPPER) {
                if (values[p + 1] >= 128 && values[p + 1] < 0x10FFFF) {
                    return false;
                }
                p += 2;
            } else {
                p++;
            }
        } while (types[p] == Element.CHAR_ALT);
        return true;
    }
}
