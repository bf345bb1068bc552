package dev.lazarus.kt.grammar;

/**
 * Rules for "any text that does not contain {@code delimiter}", one rule per how much of the delimiter the text
 * ends with (a Knuth-Morris-Pratt automaton written as grammar), as llama-server writes the free text before a
 * required tool call.
 */
final class Until {

    private Until() {}

    /** Adds the rules; returns the name of the first. */
    static String rules(JsonSchemaGrammar c, String base, String delimiter) {
        return rules(c, base, delimiter, false);
    }

    /**
     * Rules for "any text up to and including the first {@code delimiter}" (llama-server's {@code ac-} rules: the
     * text of an XML call's string argument with its close tag).
     */
    static String through(JsonSchemaGrammar c, String base, String delimiter) {
        return rules(c, base, delimiter, true);
    }

    private static String rules(JsonSchemaGrammar c, String base, String delimiter, boolean through) {
        int[] d = delimiter.codePoints().toArray();
        int[] fail = failure(d);
        String[] names = new String[d.length];
        for (int k = 0; k < d.length; k++) {
            names[k] = base + (k == 0 ? "" : String.format("-%02d", k));
        }
        for (int k = 0; k < d.length; k++) {
            StringBuilder rule = new StringBuilder();
            StringBuilder seen = new StringBuilder();
            java.util.Set<Integer> chars = new java.util.LinkedHashSet<>();
            // characters that lead somewhere other than back to the start, in delimiter order
            for (int j = 0; j <= k; j++) {
                chars.add(d[j]);
            }
            for (int ch : chars) {
                int next = step(d, fail, k, ch);
                if (next == 0) {
                    continue;
                }
                seen.appendCodePoint(ch);
                rule.append(" | ").append(charClass(ch, false));
                if (next < d.length) {
                    rule.append(' ').append(names[next]);
                }
                // next == length: the delimiter would be complete, so that character is not allowed here (or,
                // through it, ends the text)
                if (next == d.length && !through) {
                    rule.setLength(rule.length() - charClass(ch, false).length() - 3);
                }
            }
            rule.append(" | ").append(charClass(seen.toString(), true)).append(' ').append(names[0]);
            // "| ...": the empty alternative first, as llama-server writes it; none where the delimiter must come
            c.addRule(names[k], through ? rule.substring(3) : rule.toString().strip());
        }
        return names[0];
    }

    private static int[] failure(int[] d) {
        int[] f = new int[d.length + 1];
        f[0] = -1;
        for (int i = 1; i <= d.length; i++) {
            int k = f[i - 1];
            while (k >= 0 && d[k] != d[i - 1]) {
                k = f[k];
            }
            f[i] = k + 1;
        }
        return f;
    }

    /** The matched length after {@code ch} when {@code k} characters of the delimiter were matched. */
    private static int step(int[] d, int[] fail, int k, int ch) {
        while (k >= 0 && (k == d.length || d[k] != ch)) {
            k = fail[k];
        }
        return k + 1;
    }

    private static String charClass(int ch, boolean negated) {
        return charClass(new String(Character.toChars(ch)), negated);
    }

    private static String charClass(String chars, boolean negated) {
        StringBuilder out = new StringBuilder(negated ? "[^" : "[");
        chars.codePoints().forEach(ch -> {
            switch (ch) {
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\\', ']', '[', '-', '"' -> out.append('\\').appendCodePoint(ch);
                case '^' -> out.append("\\x5E");
                default -> out.appendCodePoint(ch);
            }
        });
        return out.append(']').toString();
    }
}
