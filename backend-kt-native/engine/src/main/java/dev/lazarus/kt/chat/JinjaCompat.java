package dev.lazarus.kt.chat;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Rewrites the few Jinja2 constructs that Jinjava parses differently, inside template tags only,
 * into equivalent forms it reads the Jinja2 way:
 * <ul>
 *   <li>{@code not}: in Jinja2 it binds more loosely than comparisons and tests ({@code not x is defined}
 *       is {@code not (x is defined)}, {@code not a|length == 1} is {@code not (a|length == 1)}), in
 *       Jinjava as tightly as Java's {@code !}; its operand is parenthesised up to the next
 *       {@code and}/{@code or}/{@code if}/{@code else}, comma or closing bracket;</li>
 *   <li>{@code f(name=x|length - 1)}: Jinjava cannot take a filter expression as a keyword argument
 *       unless it is parenthesised;</li>
 *   <li>{@code x[::-1]}: Jinjava has no slice step; reversing is the only step templates use.</li>
 *   <li>{@code loop.previtem}, {@code loop.nextitem} (Qwen3.5 groups tool results by them): Jinjava's loop has
 *       neither; inside a loop over a plain name they become that sequence's item before or after, none at the
 *       ends.</li>
 * </ul>
 */
final class JinjaCompat {

    private static final Pattern TAG = Pattern.compile("\\{%.*?%}|\\{\\{.*?}}", Pattern.DOTALL);
    private static final Pattern FILTERED_KEYWORD_ARGUMENT = Pattern.compile(
            "(?<=[(,]\\s{0,8})([A-Za-z_]\\w*\\s*=(?!=)\\s*)([^,()'\"=]*\\|[^,()'\"]*?)(\\s*)(?=[,)])");
    private static final Pattern REVERSE_SLICE = Pattern.compile("\\[\\s*:\\s*:\\s*-1\\s*]");

    private JinjaCompat() {}

    private static final Pattern FOR = Pattern.compile("\\{%-?\\s*for\\s.+?\\sin\\s+(.+?)\\s*-?%}", Pattern.DOTALL);
    private static final Pattern END_FOR = Pattern.compile("\\{%-?\\s*endfor\\b");
    private static final Pattern PLAIN_NAME = Pattern.compile("[A-Za-z_][\\w.]*");

    static String rewrite(String source) {
        Matcher tags = TAG.matcher(source);
        StringBuilder out = new StringBuilder(source.length() + 64);
        java.util.ArrayDeque<String> loops = new java.util.ArrayDeque<>(); // the sequence of each open loop, "" if not a name
        while (tags.find()) {
            String tag = tags.group();
            Matcher loop = FOR.matcher(tag);
            if (loop.matches()) {
                loops.push(PLAIN_NAME.matcher(loop.group(1)).matches() ? loop.group(1) : "");
            } else if (END_FOR.matcher(tag).lookingAt() && !loops.isEmpty()) {
                loops.pop();
            }
            tags.appendReplacement(out, Matcher.quoteReplacement(rewriteTag(neighbours(tag, loops.peek()))));
        }
        tags.appendTail(out);
        return out.toString();
    }

    /** {@code loop.previtem} and {@code loop.nextitem} as items of {@code sequence} (left as written without one). */
    private static String neighbours(String tag, String sequence) {
        if (sequence == null || sequence.isEmpty()) {
            return tag;
        }
        return tag.replace("loop.previtem", "(" + sequence + "[loop.index0 - 1] if loop.index0 > 0 else none)")
                .replace("loop.nextitem", "(" + sequence + "[loop.index0 + 1] if loop.index0 + 1 < loop.length else none)");
    }

    private static String rewriteTag(String tag) {
        String t = parenthesiseNot(tag);
        t = FILTERED_KEYWORD_ARGUMENT.matcher(t).replaceAll("$1($2)$3");
        return REVERSE_SLICE.matcher(t).replaceAll("|reverse");
    }

    private static final java.util.Set<String> BEFORE_UNARY_NOT = java.util.Set.of("", "(", "[", ",", "=", "and", "or",
            "not", "if", "elif", "else", "{%", "{%-", "{{", "{{-", "return");
    private static final java.util.Set<String> ENDS_NOT_OPERAND = java.util.Set.of("and", "or", "if", "else");

    /** Wraps the operand of each unary {@code not} in parentheses (binary {@code not in} and {@code is not} untouched). */
    static String parenthesiseNot(String tag) {
        StringBuilder out = new StringBuilder(tag.length() + 16);
        int i = 0;
        String previousToken = "";
        while (i < tag.length()) {
            char c = tag.charAt(i);
            if (c == '\'' || c == '"') {
                int end = skipString(tag, i);
                out.append(tag, i, end);
                previousToken = "'";
                i = end;
                continue;
            }
            if (Character.isLetter(c) || c == '_') {
                int end = i;
                while (end < tag.length() && (Character.isLetterOrDigit(tag.charAt(end)) || tag.charAt(end) == '_')) {
                    end++;
                }
                String word = tag.substring(i, end);
                boolean unaryNot = word.equals("not") && BEFORE_UNARY_NOT.contains(previousToken)
                        && (i == 0 || tag.charAt(i - 1) != '.');
                if (unaryNot) {
                    int operandEnd = operandEnd(tag, end);
                    out.append("not (").append(parenthesiseNot(tag.substring(end, operandEnd)).strip()).append(')');
                    if (operandEnd < tag.length() && Character.isLetterOrDigit(tag.charAt(operandEnd))) {
                        out.append(' ');
                    }
                    i = operandEnd;
                    previousToken = ")";
                    continue;
                }
                out.append(word);
                previousToken = word;
                i = end;
                continue;
            }
            if (!Character.isWhitespace(c)) {
                // tag openers count as one token so that "{% if not x" is seen as starting an expression
                if (c == '{' && i + 1 < tag.length() && (tag.charAt(i + 1) == '%' || tag.charAt(i + 1) == '{')) {
                    int end = i + 2 < tag.length() && tag.charAt(i + 2) == '-' ? i + 3 : i + 2;
                    out.append(tag, i, end);
                    previousToken = tag.substring(i, end);
                    i = end;
                    continue;
                }
                previousToken = String.valueOf(c);
            }
            out.append(c);
            i++;
        }
        return out.toString();
    }

    private static int skipString(String s, int start) {
        char quote = s.charAt(start);
        int i = start + 1;
        while (i < s.length() && s.charAt(i) != quote) {
            i += s.charAt(i) == '\\' ? 2 : 1;
        }
        return Math.min(i + 1, s.length());
    }

    /** Where the operand of a unary not starting at {@code from} ends. */
    private static int operandEnd(String s, int from) {
        int depth = 0;
        int i = from;
        while (i < s.length()) {
            char c = s.charAt(i);
            if (c == '\'' || c == '"') {
                i = skipString(s, i);
                continue;
            }
            if (c == '(' || c == '[' || (c == '{' && depth >= 0 && !s.startsWith("{%", i) && !s.startsWith("{{", i))) {
                depth++;
            } else if (c == ')' || c == ']' || c == '}') {
                if (depth == 0) {
                    return trimEnd(s, from, i);
                }
                depth--;
            } else if (depth == 0 && (c == ',' || s.startsWith("%}", i) || s.startsWith("-%}", i) || s.startsWith("-}}", i))) {
                return trimEnd(s, from, i);
            } else if (depth == 0 && (Character.isLetter(c) || c == '_')) {
                int end = i;
                while (end < s.length() && (Character.isLetterOrDigit(s.charAt(end)) || s.charAt(end) == '_')) {
                    end++;
                }
                boolean standalone = i == 0 || !(Character.isLetterOrDigit(s.charAt(i - 1)) || s.charAt(i - 1) == '.' || s.charAt(i - 1) == '_');
                if (standalone && ENDS_NOT_OPERAND.contains(s.substring(i, end))) {
                    return trimEnd(s, from, i);
                }
                i = end;
                continue;
            }
            i++;
        }
        return s.length();
    }

    private static int trimEnd(String s, int from, int end) {
        int e = end;
        while (e > from && Character.isWhitespace(s.charAt(e - 1))) {
            e--;
        }
        return e;
    }
}
