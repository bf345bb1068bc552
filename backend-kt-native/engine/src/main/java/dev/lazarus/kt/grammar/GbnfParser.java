package dev.lazarus.kt.grammar;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads GBNF, llama.cpp's grammar syntax: {@code name ::= alternates} rules, string literals, character classes
 * ({@code [a-z]}, {@code [^"]}), {@code .}, groups, the repetitions {@code * + ? {m} {m,} {m,n}}, token references
 * ({@code <[id]>}, {@code <text>}, negated with {@code !}), {@code #} comments. Repetitions are rewritten into
 * helper rules as llama.cpp rewrites them, with its limits; the result is checked for undefined rules, a missing
 * {@code root} and left recursion, each a {@link GrammarException} with the reason.
 */
final class GbnfParser {

    /** llama.cpp's bound on repetition counts and on the rules one repetition may multiply into. */
    static final int MAX_REPETITION = 2000;

    private final int[] src;
    private final Grammar.TokenLookup tokens;
    private final Map<String, Integer> symbols = new HashMap<>();
    private final List<String> names = new ArrayList<>();
    private final List<Rule> rules = new ArrayList<>();
    private int pos;

    /** One rule's elements as they are built. */
    private static final class Rule {
        int[] types = new int[8];
        int[] values = new int[8];
        int size;

        void add(int type, int value) {
            if (size == types.length) {
                types = java.util.Arrays.copyOf(types, size * 2);
                values = java.util.Arrays.copyOf(values, size * 2);
            }
            types[size] = type;
            values[size++] = value;
        }

        void truncate(int n) {
            size = n;
        }

        Rule slice(int from) {
            Rule r = new Rule();
            for (int i = from; i < size; i++) {
                r.add(types[i], values[i]);
            }
            return r;
        }

        void addAll(Rule r) {
            for (int i = 0; i < r.size; i++) {
                add(r.types[i], r.values[i]);
            }
        }
    }

    private GbnfParser(String text, Grammar.TokenLookup tokens) {
        int[] cps = text.codePoints().toArray();
        this.src = java.util.Arrays.copyOf(cps, cps.length + 4); // trailing zeros: the end, as C's NUL
        for (int i = 0; i < cps.length; i++) {
            if (cps[i] == 0) { // the C parser stops at a NUL
                java.util.Arrays.fill(src, i, src.length, 0);
                break;
            }
        }
        this.tokens = tokens;
    }

    static Grammar parse(String text, Grammar.TokenLookup tokens) {
        return new GbnfParser(text, tokens).grammar();
    }

    private Grammar grammar() {
        pos = space(0, true);
        while (src[pos] != 0) {
            rule();
        }
        if (rules.isEmpty()) {
            throw new GrammarException("Failed to parse grammar: the grammar has no rules");
        }
        for (int id = 0; id < names.size(); id++) {
            if (id >= rules.size() || rules.get(id) == null) {
                throw new GrammarException("Failed to parse grammar: undefined rule identifier '" + names.get(id) + "'");
            }
        }
        Integer root = symbols.get("root");
        if (root == null) {
            throw new GrammarException("Failed to parse grammar: the grammar does not contain a 'root' symbol");
        }
        int total = 0;
        for (Rule r : rules) {
            total += r.size;
        }
        int[] types = new int[total + 1];
        int[] values = new int[total + 1];
        int[] starts = new int[rules.size()];
        int at = 0;
        for (int i = 0; i < rules.size(); i++) {
            starts[i] = at;
            Rule r = rules.get(i);
            System.arraycopy(r.types, 0, types, at, r.size);
            System.arraycopy(r.values, 0, values, at, r.size);
            at += r.size;
        }
        types[total] = Element.END; // a guard: class scans look one element ahead
        Grammar g = new Grammar(types, values, starts, root, names);
        LeftRecursion.check(g);
        return g;
    }

    private int symbol(String name) {
        return symbols.computeIfAbsent(name, n -> {
            names.add(n);
            return names.size() - 1;
        });
    }

    private int generatedSymbol(String base) {
        int id = names.size();
        String name = base + "_" + id;
        symbols.put(name, id);
        names.add(name);
        return id;
    }

    private void define(int id, Rule rule) {
        while (rules.size() <= id) {
            rules.add(null);
        }
        rules.set(id, rule);
    }

    private void rule() {
        int nameEnd = name(pos);
        String name = text(pos, nameEnd);
        int id = symbol(name);
        pos = space(nameEnd, false);
        if (!(src[pos] == ':' && src[pos + 1] == ':' && src[pos + 2] == '=')) {
            throw error("expecting ::= at " + rest(pos));
        }
        pos = space(pos + 3, true);
        alternates(name, id, false);
        if (src[pos] == '\r') {
            pos += src[pos + 1] == '\n' ? 2 : 1;
        } else if (src[pos] == '\n') {
            pos++;
        } else if (src[pos] != 0) {
            throw error("expecting newline or end at " + rest(pos));
        }
        pos = space(pos, true);
    }

    private void alternates(String ruleName, int id, boolean nested) {
        Rule rule = new Rule();
        sequence(ruleName, rule, nested);
        while (src[pos] == '|') {
            rule.add(Element.ALT, 0);
            pos = space(pos + 1, true);
            sequence(ruleName, rule, nested);
        }
        rule.add(Element.END, 0);
        define(id, rule);
    }

    private void sequence(String ruleName, Rule rule, boolean nested) {
        int lastStart = rule.size;
        long prevRules = 1;
        while (src[pos] != 0) {
            int c = src[pos];
            if (c == '"') {
                pos++;
                lastStart = rule.size;
                prevRules = 1;
                while (src[pos] != '"') {
                    if (src[pos] == 0) {
                        throw error("unexpected end of input");
                    }
                    rule.add(Element.CHAR, character());
                }
                pos = space(pos + 1, nested);
            } else if (c == '[') {
                pos++;
                int startType = Element.CHAR;
                if (src[pos] == '^') {
                    pos++;
                    startType = Element.CHAR_NOT;
                }
                lastStart = rule.size;
                prevRules = 1;
                while (src[pos] != ']') {
                    if (src[pos] == 0) {
                        throw error("unexpected end of input");
                    }
                    int type = lastStart < rule.size ? Element.CHAR_ALT : startType;
                    rule.add(type, character());
                    if (src[pos] == '-' && src[pos + 1] != ']') {
                        if (src[pos + 1] == 0) {
                            throw error("unexpected end of input");
                        }
                        pos++;
                        rule.add(Element.CHAR_RNG_UPPER, character());
                    }
                }
                pos = space(pos + 1, nested);
            } else if (c == '<' || c == '!') {
                int type = Element.TOKEN;
                if (c == '!') {
                    type = Element.TOKEN_NOT;
                    pos++;
                }
                int token = token();
                lastStart = rule.size;
                prevRules = 1;
                rule.add(type, token);
                pos = space(pos, nested);
            } else if (isWordChar(c)) {
                int end = name(pos);
                int ref = symbol(text(pos, end));
                pos = space(end, nested);
                lastStart = rule.size;
                prevRules = 1;
                rule.add(Element.RULE_REF, ref);
            } else if (c == '(') {
                pos = space(pos + 1, true);
                int before = names.size();
                int sub = generatedSymbol(ruleName);
                alternates(ruleName, sub, true);
                prevRules = Math.max(1, names.size() - before);
                lastStart = rule.size;
                rule.add(Element.RULE_REF, sub);
                if (src[pos] != ')') {
                    throw error("expecting ')' at " + rest(pos));
                }
                pos = space(pos + 1, nested);
            } else if (c == '.') {
                lastStart = rule.size;
                prevRules = 1;
                rule.add(Element.CHAR_ANY, 0);
                pos = space(pos + 1, nested);
            } else if (c == '*' || c == '+' || c == '?') {
                pos = space(pos + 1, nested);
                prevRules = repeat(ruleName, rule, lastStart, prevRules, c == '+' ? 1 : 0, c == '?' ? 1 : -1);
            } else if (c == '{') {
                pos = space(pos + 1, nested);
                if (!isDigit(src[pos])) {
                    throw error("expecting an int at " + rest(pos));
                }
                int end = integer(pos);
                long min = number(pos, end);
                pos = space(end, nested);
                long max = -1;
                if (src[pos] == '}') {
                    max = min;
                    pos = space(pos + 1, nested);
                } else if (src[pos] == ',') {
                    pos = space(pos + 1, nested);
                    if (isDigit(src[pos])) {
                        int maxEnd = integer(pos);
                        max = number(pos, maxEnd);
                        pos = space(maxEnd, nested);
                    }
                    if (src[pos] != '}') {
                        throw error("expecting '}' at " + rest(pos));
                    }
                    pos = space(pos + 1, nested);
                } else {
                    throw error("expecting ',' at " + rest(pos));
                }
                if (min > MAX_REPETITION) {
                    throw error("number of repetitions exceeds sane defaults, please reduce the number of repetitions");
                }
                if (max > MAX_REPETITION) {
                    max = -1; // llama.cpp reads a larger bound as none
                }
                prevRules = repeat(ruleName, rule, lastStart, prevRules, min, max);
            } else {
                break;
            }
        }
    }

    /**
     * Rewrites the item that starts at {@code lastStart}: {@code S{m,n}} becomes m copies of S and n-m nested
     * optional helper rules ({@code S' ::= S S'' |}); no maximum ({@code max} -1) becomes one self-referencing rule.
     */
    private long repeat(String ruleName, Rule rule, int lastStart, long prevRules, long min, long max) {
        boolean noMax = max < 0;
        if (lastStart == rule.size) {
            throw error("expecting preceding item to */+/?/{ at " + rest(pos));
        }
        Rule item = rule.slice(lastStart);
        long total = !noMax && max > 0 ? max : min > 0 ? min : 1;
        if (prevRules * total >= MAX_REPETITION) {
            throw error("number of rules that are going to be repeated multiplied by the new repetition exceeds sane"
                    + " defaults, please reduce the number of repetitions or rule complexity");
        }
        if (min == 0) {
            rule.truncate(lastStart);
        } else {
            for (long i = 1; i < min; i++) {
                rule.addAll(item);
            }
        }
        long optional = noMax ? 1 : max - min;
        int last = 0;
        for (long i = 0; i < optional; i++) {
            Rule rec = item.slice(0);
            int id = generatedSymbol(ruleName);
            if (i > 0 || noMax) {
                rec.add(Element.RULE_REF, noMax ? id : last);
            }
            rec.add(Element.ALT, 0);
            rec.add(Element.END, 0);
            define(id, rec);
            last = id;
        }
        if (optional > 0) {
            rule.add(Element.RULE_REF, last);
        }
        return prevRules * total;
    }

    /** One character of a literal or class, escapes decoded; advances past it. */
    private int character() {
        int c = src[pos];
        if (c == '\\') {
            int e = src[pos + 1];
            pos += 2;
            return switch (e) {
                case 'x' -> hex(2);
                case 'u' -> hex(4);
                case 'U' -> hex(8);
                case 't' -> '\t';
                case 'r' -> '\r';
                case 'n' -> '\n';
                case '\\', '"', '[', ']', '-' -> e;
                default -> throw error("unknown escape at " + rest(pos - 2));
            };
        }
        if (c == 0) {
            throw error("unexpected end of input");
        }
        pos++;
        return c;
    }

    private int hex(int size) {
        long value = 0;
        int start = pos;
        for (int i = 0; i < size; i++) {
            int c = src[pos];
            int d = Character.digit(c, 16);
            if (c == 0 || d < 0 || c > 'f') {
                throw error("expecting " + size + " hex chars at " + rest(start));
            }
            value = (value << 4) | d;
            pos++;
        }
        return (int) Math.min(value, Integer.MAX_VALUE);
    }

    private int token() {
        int start = pos;
        if (src[pos] != '<') {
            throw error("expecting '<' at " + rest(pos));
        }
        pos++;
        if (src[pos] == '[') {
            pos++;
            int end = integer(pos);
            long id = number(pos, end);
            pos = end;
            if (src[pos] != ']') {
                throw error("expecting ']' at " + rest(pos));
            }
            if (src[pos + 1] != '>') {
                throw error("expecting '>' at " + rest(pos + 1));
            }
            pos += 2;
            return (int) id;
        }
        if (tokens == null) {
            throw error("no vocab to parse token at " + rest(start));
        }
        while (src[pos] != 0 && src[pos] != '>') {
            pos++;
        }
        if (src[pos] != '>') {
            throw error("expecting '>' at " + rest(pos));
        }
        pos++;
        String text = text(start, pos);
        int[] ids = tokens.tokenize(text);
        if (ids.length != 1) {
            throw error("invalid token '" + text + "'");
        }
        return ids[0];
    }

    private int space(int at, boolean newlineOk) {
        while (true) {
            int c = src[at];
            if (c == '#') {
                while (src[at] != 0 && src[at] != '\r' && src[at] != '\n') {
                    at++;
                }
            } else if (c == ' ' || c == '\t' || (newlineOk && (c == '\r' || c == '\n'))) {
                at++;
            } else {
                return at;
            }
        }
    }

    private int name(int at) {
        int end = at;
        while (isWordChar(src[end])) {
            end++;
        }
        if (end == at) {
            throw error("expecting name at " + rest(at));
        }
        return end;
    }

    private int integer(int at) {
        int end = at;
        while (isDigit(src[end])) {
            end++;
        }
        if (end == at) {
            throw error("expecting integer at " + rest(at));
        }
        return end;
    }

    private long number(int from, int to) {
        String digits = text(from, to);
        return digits.length() > 12 ? Long.MAX_VALUE / 4 : Long.parseLong(digits);
    }

    private static boolean isDigit(int c) {
        return c >= '0' && c <= '9';
    }

    private static boolean isWordChar(int c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || isDigit(c);
    }

    private String text(int from, int to) {
        return new String(src, from, to - from);
    }

    private String rest(int at) {
        int end = at;
        while (src[end] != 0 && end - at < 40) {
            end++;
        }
        return "'" + text(at, end) + (src[end] != 0 ? "..." : "") + "'";
    }

    private static GrammarException error(String reason) {
        return new GrammarException("Failed to parse grammar: " + reason);
    }
}
