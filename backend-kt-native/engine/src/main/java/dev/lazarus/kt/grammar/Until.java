package dev.lazarus.kt.grammar;

/**
 * Rules for "any text that does not contain {@code delimiter}" (or any of several), one rule per how much of a
 * delimiter the text ends with (an Aho-Corasick automaton written as grammar), as llama-server writes the free text
 * before a required tool call.
 */
final class Until {

    private Until() {}

    /** Adds the rules; returns the name of the first. */
    static String rules(JsonSchemaGrammar c, String base, String delimiter) {
        return rules(c, base, java.util.List.of(delimiter), false);
    }

    /** Rules for "any text that contains none of {@code delimiters}" (an Aho-Corasick automaton as grammar). */
    static String rules(JsonSchemaGrammar c, String base, java.util.List<String> delimiters) {
        return rules(c, base, delimiters, false);
    }

    /**
     * Rules for "any text up to and including the first {@code delimiter}" (llama-server's {@code ac-} rules: the
     * text of an XML call's string argument with its close tag).
     */
    static String through(JsonSchemaGrammar c, String base, String delimiter) {
        return rules(c, base, java.util.List.of(delimiter), true);
    }

    private static String rules(JsonSchemaGrammar c, String base, java.util.List<String> delimiters, boolean through) {
        Trie trie = new Trie(delimiters);
        int n = trie.size();
        String[] names = new String[n];
        for (int k = 0; k < n; k++) {
            names[k] = base + (k == 0 ? "" : String.format("-%02d", k));
        }
        for (int k = 0; k < n; k++) {
            if (trie.done[k]) {
                continue; // a whole delimiter: no text goes on from here
            }
            StringBuilder rule = new StringBuilder();
            StringBuilder seen = new StringBuilder();
            for (int ch : trie.candidates(k)) {
                int next = trie.step(k, ch);
                if (next == 0) {
                    continue;
                }
                seen.appendCodePoint(ch);
                if (!trie.done[next]) {
                    rule.append(" | ").append(charClass(ch, false)).append(' ').append(names[next]);
                } else if (through) { // the delimiter is complete: the text ends with it
                    rule.append(" | ").append(charClass(ch, false));
                }
                // (until: that character would complete a delimiter, so it is not allowed here)
            }
            rule.append(" | ").append(charClass(seen.toString(), true)).append(' ').append(names[0]);
            // "| ...": the empty alternative first, as llama-server writes it; none where the delimiter must come
            c.addRule(names[k], through ? rule.substring(3) : rule.toString().strip());
        }
        return names[0];
    }

    /** The delimiters' prefixes as states, with Aho-Corasick failure links; state 0 is the empty prefix. */
    private static final class Trie {
        final java.util.List<java.util.Map<Integer, Integer>> children = new java.util.ArrayList<>();
        final java.util.List<int[]> paths = new java.util.ArrayList<>();
        int[] fail;
        boolean[] done;

        Trie(java.util.List<String> delimiters) {
            add(new int[0]);
            java.util.List<Integer> ends = new java.util.ArrayList<>();
            for (String d : delimiters) {
                int[] cps = d.codePoints().toArray();
                int node = 0;
                for (int i = 0; i < cps.length; i++) {
                    Integer child = children.get(node).get(cps[i]);
                    if (child == null) {
                        child = add(java.util.Arrays.copyOf(cps, i + 1));
                        children.get(node).put(cps[i], child);
                    }
                    node = child;
                }
                ends.add(node);
            }
            fail = new int[size()];
            done = new boolean[size()];
            ends.forEach(e -> done[e] = true);
            java.util.ArrayDeque<Integer> queue = new java.util.ArrayDeque<>(children.getFirst().values());
            while (!queue.isEmpty()) { // breadth first: a node's failure link is known before its children's
                int node = queue.poll();
                done[node] |= done[fail[node]];
                for (var e : children.get(node).entrySet()) {
                    int f = fail[node];
                    while (f != 0 && !children.get(f).containsKey(e.getKey())) {
                        f = fail[f];
                    }
                    Integer to = children.get(f).get(e.getKey());
                    fail[e.getValue()] = to != null && to != (int) e.getValue() ? to : 0;
                    queue.add(e.getValue());
                }
            }
        }

        private int add(int[] path) {
            children.add(new java.util.LinkedHashMap<>());
            paths.add(path);
            return children.size() - 1;
        }

        int size() {
            return children.size();
        }

        /** The state after {@code ch} in state {@code k}. */
        int step(int k, int ch) {
            int node = k;
            while (node != 0 && !children.get(node).containsKey(ch)) {
                node = fail[node];
            }
            return children.get(node).getOrDefault(ch, 0);
        }

        /** The characters that may lead anywhere but the start from {@code k}, in the order llama-server lists them. */
        java.util.Set<Integer> candidates(int k) {
            java.util.Set<Integer> chars = new java.util.LinkedHashSet<>();
            for (int ch : paths.get(k)) {
                chars.add(ch);
            }
            for (int node = k; ; node = fail[node]) {
                chars.addAll(children.get(node).keySet());
                if (node == 0) {
                    return chars;
                }
            }
        }
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
