package dev.lazarus.kt.grammar;

/**
 * The kinds of grammar elements, llama.cpp's {@code llama_gretype}: a rule is a run of elements, its alternates
 * separated by {@link #ALT} and closed by {@link #END}. A character class is one {@link #CHAR} / {@link #CHAR_NOT}
 * / {@link #CHAR_ANY} element followed by {@link #CHAR_ALT} and {@link #CHAR_RNG_UPPER} elements.
 */
final class Element {

    static final int END = 0;
    static final int ALT = 1;
    static final int RULE_REF = 2;
    static final int CHAR = 3;
    static final int CHAR_NOT = 4;
    static final int CHAR_RNG_UPPER = 5;
    static final int CHAR_ALT = 6;
    static final int CHAR_ANY = 7;
    static final int TOKEN = 8;
    static final int TOKEN_NOT = 9;

    private Element() {}

    static boolean isEndOfSequence(int type) {
        return type == END || type == ALT;
    }

    static boolean isCharStart(int type) {
        return type == CHAR || type == CHAR_NOT || type == CHAR_ANY;
    }

    static boolean isToken(int type) {
        return type == TOKEN || type == TOKEN_NOT;
    }
}
