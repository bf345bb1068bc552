package dev.lazarus.kt.grammar;

/**
 * Refuses left-recursive grammars ({@code a ::= a "x" | "y"}), which a stack matcher would expand forever:
 * llama.cpp's check, following leftmost references and the ones after rules that may match nothing.
 */
final class LeftRecursion {

    private final Grammar g;
    private final boolean[] visited;
    private final boolean[] inProgress;
    private final boolean[] mayBeEmpty;

    private LeftRecursion(Grammar g) {
        this.g = g;
        int n = g.ruleCount();
        visited = new boolean[n];
        inProgress = new boolean[n];
        mayBeEmpty = new boolean[n];
    }

    static void check(Grammar g) {
        LeftRecursion check = new LeftRecursion(g);
        for (int rule = 0; rule < g.ruleCount(); rule++) {
            if (!check.visited[rule] && check.recursesLeft(rule)) {
                throw new GrammarException("Failed to parse grammar: unsupported grammar, left recursion detected for"
                        + " nonterminal '" + g.ruleName(rule) + "'");
            }
        }
    }

    private boolean recursesLeft(int rule) {
        if (inProgress[rule]) {
            return true;
        }
        inProgress[rule] = true;
        int start = g.ruleStart[rule];
        boolean atStart = true;
        for (int i = start; ; i++) {
            if (Element.isEndOfSequence(g.types[i])) {
                if (atStart) {
                    mayBeEmpty[rule] = true;
                    break;
                }
                atStart = true;
                if (g.types[i] == Element.END) {
                    break;
                }
            } else {
                atStart = false;
            }
        }
        boolean leftmost = true;
        for (int i = start; ; i++) {
            int type = g.types[i];
            if (type == Element.RULE_REF && leftmost) {
                int ref = g.values[i];
                if (recursesLeft(ref)) {
                    return true;
                }
                if (!mayBeEmpty[ref]) {
                    leftmost = false;
                }
            } else if (Element.isEndOfSequence(type)) {
                leftmost = true;
            } else {
                leftmost = false;
            }
            if (type == Element.END) {
                break;
            }
        }
        inProgress[rule] = false;
        visited[rule] = true;
        return false;
    }
}
