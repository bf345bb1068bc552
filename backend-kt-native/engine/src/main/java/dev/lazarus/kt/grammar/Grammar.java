package dev.lazarus.kt.grammar;

import java.util.List;

/**
 * A parsed GBNF grammar: every rule's elements laid end to end in two parallel arrays (kind and value), so that a
 * position in the grammar is one {@code int}. Immutable. Matching characters against a class follows llama.cpp's
 * {@code llama_grammar_match_char} and {@code llama_grammar_match_partial_char}.
 */
public final class Grammar {

    final int[] types;
    final int[] values;
    /** Where each rule's elements start. */
    final int[] ruleStart;
    final int root;
    private final List<String> names;

    Grammar(int[] types, int[] values, int[] ruleStart, int root, List<String> names) {
        this.types = types;
        this.values = values;
        this.ruleStart = ruleStart;
        this.root = root;
        this.names = List.copyOf(names);
    }

    /** Parses GBNF text with the start rule {@code root}; {@code <token>} references need a vocabulary. */
    public static Grammar parse(String gbnf) {
        return GbnfParser.parse(gbnf, null);
    }

    public static Grammar parse(String gbnf, TokenLookup tokens) {
        return GbnfParser.parse(gbnf, tokens);
    }

    /** Resolves {@code <text>} in a grammar to the one token that text is. */
    @FunctionalInterface
    public interface TokenLookup {
        /** The token ids of the text, control tokens recognised. */
        int[] tokenize(String text);
    }

    public int ruleCount() {
        return ruleStart.length;
    }

    String ruleName(int rule) {
        return names.get(rule);
    }

    /** Whether {@code cp} satisfies the class starting at {@code pos}. */
    boolean matchChar(int pos, int cp) {
        boolean positive = types[pos] != Element.CHAR_NOT;
        boolean found = false;
        do {
            if (types[pos + 1] == Element.CHAR_RNG_UPPER) {
                found |= values[pos] <= cp && cp <= values[pos + 1];
                pos += 2;
            } else if (types[pos] == Element.CHAR_ANY) {
                found = true;
                pos++;
            } else {
                found |= values[pos] == cp;
                pos++;
            }
        } while (types[pos] == Element.CHAR_ALT);
        return found == positive;
    }

    /** The position after the class starting at {@code pos}. */
    int afterChar(int pos) {
        do {
            pos += types[pos + 1] == Element.CHAR_RNG_UPPER ? 2 : 1;
        } while (types[pos] == Element.CHAR_ALT);
        return pos;
    }

    /**
     * Whether some completion of an unfinished UTF-8 sequence ({@code value} so far, {@code remain} bytes missing)
     * could satisfy the class at {@code pos}.
     */
    boolean matchPartial(int pos, int value, int remain) {
        boolean positive = types[pos] != Element.CHAR_NOT;
        if (remain < 0 || (remain == 1 && value < 2)) {
            return false; // invalid, or a 7-bit character split over two bytes (overlong)
        }
        long low = (long) value << (remain * 6);
        long high = low | ((1L << (remain * 6)) - 1);
        if (low == 0) {
            low = remain == 2 ? 1 << 11 : remain == 3 ? 1 << 16 : low;
        }
        do {
            if (types[pos + 1] == Element.CHAR_RNG_UPPER) {
                if (values[pos] <= high && low <= values[pos + 1]) {
                    return positive;
                }
                pos += 2;
            } else if (types[pos] == Element.CHAR_ANY) {
                return true;
            } else {
                if (low <= values[pos] && values[pos] <= high) {
                    return positive;
                }
                pos++;
            }
        } while (types[pos] == Element.CHAR_ALT);
        return !positive;
    }
}
