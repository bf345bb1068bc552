package dev.lazarus.kt.tokenizer;

/**
 * The Unicode facts the pre-tokenizers ask about one code point, as llama.cpp's {@code unicode.cpp}
 * classifies it: a general category folded to letter / number / punctuation / mark / symbol /
 * other, plus the {@code White_Space} property (Java's {@link Character#isWhitespace} differs:
 * it excludes no-break spaces and includes the information separators, so the set is spelled out).
 */
final class CodepointClass {

    static final int OTHER = 0;
    static final int LETTER = 1;
    static final int NUMBER = 2;
    static final int PUNCTUATION = 3;
    static final int MARK = 4;
    static final int SYMBOL = 5;

    private CodepointClass() {}

    static boolean isWhitespace(int cp) {
        return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680
                || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F
                || cp == 0x205F || cp == 0x3000;
    }

    static boolean isLetter(int cp) {
        return category(cp) == LETTER;
    }

    static boolean isNumber(int cp) {
        return category(cp) == NUMBER;
    }

    /** The folded general category; whitespace is not a category (spaces are OTHER here). */
    static int category(int cp) {
        return switch (Character.getType(cp)) {
            case Character.UPPERCASE_LETTER, Character.LOWERCASE_LETTER, Character.TITLECASE_LETTER,
                 Character.MODIFIER_LETTER, Character.OTHER_LETTER -> LETTER;
            case Character.DECIMAL_DIGIT_NUMBER, Character.LETTER_NUMBER, Character.OTHER_NUMBER -> NUMBER;
            case Character.CONNECTOR_PUNCTUATION, Character.DASH_PUNCTUATION, Character.START_PUNCTUATION,
                 Character.END_PUNCTUATION, Character.INITIAL_QUOTE_PUNCTUATION,
                 Character.FINAL_QUOTE_PUNCTUATION, Character.OTHER_PUNCTUATION -> PUNCTUATION;
            case Character.NON_SPACING_MARK, Character.ENCLOSING_MARK, Character.COMBINING_SPACING_MARK -> MARK;
            case Character.MATH_SYMBOL, Character.CURRENCY_SYMBOL, Character.MODIFIER_SYMBOL,
                 Character.OTHER_SYMBOL -> SYMBOL;
            default -> OTHER;
        };
    }

    /** llama.cpp lower-cases the letter after an apostrophe when matching contractions case-insensitively. */
    static int toLower(int cp) {
        return Character.toLowerCase(cp);
    }
}
