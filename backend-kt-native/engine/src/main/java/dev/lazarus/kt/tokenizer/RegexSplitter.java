package dev.lazarus.kt.tokenizer;

import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A split step driven by one of the split regexes llama.cpp lists per pre-tokenizer (written in
 * its syntax: {@code \p{L}}, {@code \p{N}}, {@code \p{P}}, {@code \p{S}}, {@code \p{M}}).
 *
 * <p>llama.cpp runs these through {@code std::regex}, which knows no Unicode categories, so it
 * "collapses" the text first: ASCII stays as is, every other code point becomes one stand-in per
 * category (and non-ASCII whitespace becomes a vertical tab), and each {@code \p{X}} in the
 * regex becomes "the stand-in for X plus the ASCII characters of X" — with its own, slightly
 * unusual, ASCII tables ({@code ~} is in neither punctuation nor symbols). The same is done here
 * so that the splits agree with llama.cpp even where its tables differ from Unicode's. Text
 * between matches is kept as chunks of its own, as llama.cpp does.
 */
final class RegexSplitter implements Splitter {

    private static final char OTHER = '\uE0D0';
    private static final char[] STAND_IN = {OTHER, '\uE0D2', '\uE0D1', '\uE0D3', '\uE0D4', '\uE0D5'};

    /** The ASCII members llama.cpp gives each category, in Java character-class syntax. */
    private static final Map<String, String> CATEGORY_CLASS = Map.of(
            "N", STAND_IN[CodepointClass.NUMBER] + "0-9",
            "L", STAND_IN[CodepointClass.LETTER] + "A-Za-z",
            "Lu", STAND_IN[CodepointClass.LETTER] + "A-Za-z",
            "Ll", STAND_IN[CodepointClass.LETTER] + "A-Za-z",
            "Lt", STAND_IN[CodepointClass.LETTER] + "A-Za-z",
            "Lm", STAND_IN[CodepointClass.LETTER] + "A-Za-z",
            "Lo", STAND_IN[CodepointClass.LETTER] + "A-Za-z",
            "P", STAND_IN[CodepointClass.PUNCTUATION] + "!-#%-*,-/:-;?-@\\[-\\]_\\{\\}",
            "S", STAND_IN[CodepointClass.SYMBOL] + "\\$\\+<->\\^`\\|",
            "M", String.valueOf(STAND_IN[CodepointClass.MARK]));

    private final Pattern pattern;
    private final boolean collapsed;
    private final String source;

    RegexSplitter(String llamaRegex) {
        this.source = llamaRegex;
        this.collapsed = llamaRegex.contains("\\p{");
        this.pattern = Pattern.compile(translate(llamaRegex));
    }

    @Override
    public IntList split(int[] cps, IntList lengths) {
        Text text = collapsed ? collapse(cps) : widen(cps);
        Matcher matcher = pattern.matcher(text.chars);
        IntList out = new IntList(lengths.size() * 4);
        int start = 0;
        for (int i = 0; i < lengths.size(); i++) {
            int end = start + lengths.get(i);
            int regionStart = text.charIndex(start);
            int regionEnd = text.charIndex(end);
            matcher.region(regionStart, regionEnd);
            int done = start;
            while (matcher.find()) {
                if (matcher.end() == matcher.start()) {
                    continue;
                }
                int matchStart = text.cpIndex(matcher.start());
                int matchEnd = text.cpIndex(matcher.end());
                if (matchStart > done) {
                    out.add(matchStart - done);
                }
                out.add(matchEnd - matchStart);
                done = matchEnd;
            }
            if (done < end) {
                out.add(end - done);
            }
            start = end;
        }
        return out;
    }

    @Override
    public String toString() {
        return source;
    }

    /** Rewrites {@code \p{X}} to stand-in classes and a bare {@code $} to end-of-chunk. */
    private static String translate(String regex) {
        StringBuilder out = new StringBuilder(regex.length() * 2);
        boolean inClass = false;
        for (int i = 0; i < regex.length(); i++) {
            char c = regex.charAt(i);
            boolean escaped = precedingBackslashes(regex, i) % 2 == 1;
            if (c == '[' && !escaped && !inClass) {
                inClass = true;
            } else if (c == ']' && !escaped && inClass) {
                inClass = false;
            } else if (c == '\\' && regex.startsWith("p{", i + 1)) {
                int close = regex.indexOf('}', i + 3);
                String members = CATEGORY_CLASS.get(regex.substring(i + 3, close));
                if (members == null) {
                    throw new TokenizerException("unsupported category in split regex: " + regex);
                }
                out.append(inClass ? members : "[" + members + "]");
                i = close;
                continue;
            } else if (c == '$' && !escaped && !inClass) {
                // ECMAScript $ is the end of the input; Java's would also match before a final newline
                out.append("\\z");
                continue;
            }
            out.append(c);
        }
        return out.toString();
    }

    private static int precedingBackslashes(String s, int index) {
        int n = 0;
        while (index - n - 1 >= 0 && s.charAt(index - n - 1) == '\\') {
            n++;
        }
        return n;
    }

    private static Text collapse(int[] cps) {
        char[] chars = new char[cps.length];
        for (int i = 0; i < cps.length; i++) {
            int cp = cps[i];
            if (cp < 128) {
                chars[i] = (char) cp;
            } else if (CodepointClass.isWhitespace(cp)) {
                chars[i] = '\u000B';
            } else {
                chars[i] = STAND_IN[CodepointClass.category(cp)];
            }
        }
        return new Text(new String(chars), null, null);
    }

    /** The text itself (non-ASCII whitespace as vertical tab), with index maps when it has surrogate pairs. */
    private static Text widen(int[] cps) {
        StringBuilder sb = new StringBuilder(cps.length + 8);
        boolean supplementary = false;
        for (int cp : cps) {
            if (cp >= 128 && CodepointClass.isWhitespace(cp)) {
                sb.append('\u000B');
            } else {
                sb.appendCodePoint(cp);
                supplementary |= Character.isSupplementaryCodePoint(cp);
            }
        }
        if (!supplementary) {
            return new Text(sb.toString(), null, null);
        }
        int[] cpToChar = new int[cps.length + 1];
        int[] charToCp = new int[sb.length() + 1];
        int ci = 0;
        for (int i = 0; i < cps.length; i++) {
            cpToChar[i] = ci;
            int width = Character.charCount(cps[i]);
            for (int k = 0; k < width; k++) {
                charToCp[ci + k] = i;
            }
            ci += width;
        }
        cpToChar[cps.length] = ci;
        charToCp[ci] = cps.length;
        return new Text(sb.toString(), cpToChar, charToCp);
    }

    private record Text(String chars, int[] cpToChar, int[] charToCp) {
        int charIndex(int cp) {
            return cpToChar == null ? cp : cpToChar[cp];
        }

        int cpIndex(int ch) {
            return charToCp == null ? ch : charToCp[ch];
        }
    }
}
