package dev.lazarus.kt.grammar;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A schema's {@code pattern} (a regular expression anchored with {@code ^...$}) as grammar, with the subset and the
 * quirks of llama.cpp's converter: groups, alternation, classes copied as GBNF classes, {@code . * + ? {m,n}},
 * GBNF's escapes passed through.
 */
final class SchemaPattern {

    /** One piece of the sequence being built: a literal (to be quoted) or grammar text. */
    private record Piece(String text, boolean literal) {
        String rule() {
            return literal ? "\"" + text + "\"" : text;
        }
    }

    private final JsonSchemaGrammar converter;
    private final String name;
    private final String pattern;
    private final Map<String, String> subRules = new HashMap<>();
    private int i;

    private SchemaPattern(JsonSchemaGrammar converter, String name, String pattern) {
        this.converter = converter;
        this.name = name;
        this.pattern = pattern;
    }

    /** The pattern is valid but uses what the converter does not translate: the value is then any string. */
    private static final class Unsupported extends RuntimeException {
        Unsupported() {
            super(null, null, false, false);
        }
    }

    /** GBNF's own escapes, which a pattern's escape may pass through unchanged. */
    private static final String GBNF_ESCAPES = "xuUtrn\\\"[]-";

    /**
     * The rule name of the string rule. Like llama-server (b11669), a pattern without anchors or with what it does
     * not translate (lookarounds, {@code \\d}-style classes, escapes GBNF lacks) allows any string; unbalanced
     * groups or classes are errors.
     */
    static String visit(JsonSchemaGrammar converter, String pattern, String name) {
        if (pattern.length() < 2 || !(pattern.charAt(0) == '^' && pattern.charAt(pattern.length() - 1) == '$')) {
            return converter.addRule(name, converter.visitPrimitive("string"));
        }
        SchemaPattern p = new SchemaPattern(converter, name, pattern.substring(1, pattern.length() - 1));
        try {
            String body = p.transform().rule();
            return converter.addRule(name, "\"\\\"\" (" + body + ") \"\\\"\"");
        } catch (Unsupported e) {
            return converter.addRule(name, converter.visitPrimitive("string"));
        } catch (InvalidPattern e) {
            throw invalid(pattern, e.getMessage());
        }
    }

    private static final class InvalidPattern extends RuntimeException {
        InvalidPattern(String reason) {
            super(reason, null, false, false);
        }
    }

    private static GrammarException invalid(String pattern, String reason) {
        return new GrammarException("JSON schema conversion failed:\nInvalid pattern " + pattern + ": " + reason);
    }

    private int depth;

    private Piece transform() {
        List<Piece> seq = new ArrayList<>();
        int length = pattern.length();
        while (i < length) {
            char c = pattern.charAt(i);
            if (c == '.') {
                seq.add(new Piece(converter.addRule("dot", "[^\\x0A\\x0D]"), false));
                i++;
            } else if (c == '(') {
                i++;
                if (i < length && pattern.charAt(i) == '?') {
                    if (i + 1 < length && pattern.charAt(i + 1) == ':') {
                        i += 2;
                    } else {
                        throw new Unsupported(); // lookarounds
                    }
                }
                depth++;
                int before = i;
                Piece group = transform();
                if (i > length || (i == length && (before == length || pattern.charAt(i - 1) != ')'))) {
                    throw new InvalidPattern("unbalanced parentheses");
                }
                depth--;
                seq.add(new Piece("(" + group.rule() + ")", false));
            } else if (c == ')') {
                if (depth == 0) {
                    throw new InvalidPattern("unbalanced parentheses");
                }
                i++;
                return join(seq);
            } else if (c == '[') {
                StringBuilder cls = new StringBuilder("[");
                i++;
                while (i < length && pattern.charAt(i) != ']') {
                    if (pattern.charAt(i) == '\\') {
                        if (i + 1 >= length || GBNF_ESCAPES.indexOf(pattern.charAt(i + 1)) < 0) {
                            throw new Unsupported();
                        }
                        cls.append(pattern, i, Math.min(i + 2, length));
                        i += 2;
                    } else {
                        cls.append(pattern.charAt(i));
                        i++;
                    }
                }
                if (i >= length) {
                    throw new InvalidPattern("unterminated character class");
                }
                cls.append(']');
                i++;
                seq.add(new Piece(cls.toString(), false));
            } else if (c == '|') {
                seq.add(new Piece("|", false));
                i++;
            } else if (c == '*' || c == '+' || c == '?') {
                requireItem(seq);
                seq.set(seq.size() - 1, new Piece(seq.getLast().rule() + c, false));
                i++;
            } else if (c == '{') {
                if (!repetition(seq)) {
                    return new Piece("", false);
                }
            } else {
                literal(seq);
            }
        }
        return join(seq);
    }

    /** {@code {m}}, {@code {m,}}, {@code {m,n}} after an item; false after an unreadable number. */
    private boolean repetition(List<Piece> seq) {
        int length = pattern.length();
        StringBuilder braces = new StringBuilder("{");
        i++;
        while (i < length && pattern.charAt(i) != '}') {
            braces.append(pattern.charAt(i));
            i++;
        }
        if (i >= length) {
            throw new Unsupported();
        }
        braces.append('}');
        i++;
        String[] nums = braces.substring(1, braces.length() - 1).split(",", -1);
        int min = 0;
        int max = Integer.MAX_VALUE;
        try {
            if (nums.length == 1) {
                min = max = stoi(nums[0]);
            } else if (nums.length != 2) {
                throw new Unsupported();
            } else {
                if (!nums[0].isEmpty()) {
                    min = stoi(nums[0]);
                }
                if (!nums[1].isEmpty()) {
                    max = stoi(nums[1]);
                }
            }
        } catch (NumberFormatException e) {
            throw new Unsupported();
        }
        requireItem(seq);
        Piece last = seq.getLast();
        String sub = last.text();
        if (!last.literal()) {
            String id = subRules.get(sub);
            if (id == null) {
                id = converter.addRule(name + "-" + (subRules.size() + 1), sub);
                subRules.put(sub, id);
            }
            sub = id;
        }
        seq.set(seq.size() - 1, new Piece(SchemaRules.repetition(last.literal() ? "\"" + sub + "\"" : sub, min, max, ""),
                false));
        return true;
    }

    private void literal(List<Piece> seq) {
        int length = pattern.length();
        StringBuilder literal = new StringBuilder();
        while (i < length) {
            char c = pattern.charAt(i);
            if (c == '\\' && i < length - 1) {
                char next = pattern.charAt(i + 1);
                if (SchemaRules.ESCAPED_IN_REGEX_ONLY.contains(next)) {
                    i++;
                    literal.append(pattern.charAt(i));
                    i++;
                } else if (GBNF_ESCAPES.indexOf(next) < 0) {
                    throw new Unsupported(); // \\d, \\w, \\s, \\b, \\/ ...
                } else {
                    literal.append(pattern, i, i + 2);
                    i += 2;
                }
            } else if (c == '"') {
                literal.append("\\\"");
                i++;
            } else if (!SchemaRules.NON_LITERAL.contains(c) && (i == length - 1 || literal.isEmpty()
                    || pattern.charAt(i + 1) == '.' || !SchemaRules.NON_LITERAL.contains(pattern.charAt(i + 1)))) {
                literal.append(c);
                i++;
            } else {
                break;
            }
        }
        if (!literal.isEmpty()) {
            seq.add(new Piece(literal.toString(), true));
        } else if (i < length) {
            // a character the regex subset cannot place (e.g. a stray ']')
            throw new Unsupported();
        }
    }

    private void requireItem(List<Piece> seq) {
        if (seq.isEmpty()) {
            throw new GrammarException("JSON schema conversion failed:\nrepetition without a preceding item in"
                    + " pattern '" + pattern + "'");
        }
    }

    /** The sequence as grammar text, consecutive literals merged. */
    private static Piece join(List<Piece> seq) {
        List<String> out = new ArrayList<>();
        StringBuilder literal = new StringBuilder();
        for (Piece p : seq) {
            if (p.literal()) {
                literal.append(p.text());
            } else {
                if (!literal.isEmpty()) {
                    out.add(new Piece(literal.toString(), true).rule());
                    literal.setLength(0);
                }
                out.add(p.rule());
            }
        }
        if (!literal.isEmpty()) {
            out.add(new Piece(literal.toString(), true).rule());
        }
        return new Piece(String.join(" ", out), false);
    }

    /** C's {@code stoi}: leading blanks, a sign, digits, whatever follows ignored. */
    private static int stoi(String s) {
        int at = 0;
        while (at < s.length() && Character.isWhitespace(s.charAt(at))) {
            at++;
        }
        int from = at;
        if (at < s.length() && (s.charAt(at) == '-' || s.charAt(at) == '+')) {
            at++;
        }
        while (at < s.length() && Character.isDigit(s.charAt(at))) {
            at++;
        }
        return Integer.parseInt(s.substring(from, at));
    }
}
