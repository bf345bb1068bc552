package dev.lazarus.kt.grammar;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The matcher's moves over one grammar, remembered as they are found: stacks expand into terminal-topped stacks
 * ({@code llama_grammar_advance_stack}), a state (a set of stacks) steps over a code point into the next state
 * ({@code llama_grammar_accept}). A grammar's states recur (inside a JSON string, after a key), so after the first
 * time a step is one array or map lookup. Thread-safe: sequences that share a grammar share its automaton.
 */
final class GrammarAutomaton {

    /** No stack survives. */
    static final GrammarState DEAD = new GrammarState(new Stack[0], -1, new int[0], new int[0]);
    /** Bounds the memory a pathological grammar can take; past it the remembered states are dropped. */
    private static final int MAX_STATES = 50_000;

    final Grammar grammar;
    private final Map<Long, Stack> stacks = new HashMap<>();
    private final Map<StateKey, GrammarState> states = new HashMap<>();
    private final GrammarState initial;
    private int nextStackId = 1;

    private record StateKey(int[] ids) {
        @Override
        public boolean equals(Object o) {
            return o instanceof StateKey k && Arrays.equals(ids, k.ids);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(ids);
        }
    }

    GrammarAutomaton(Grammar grammar) {
        this.grammar = grammar;
        List<Stack> start = new ArrayList<>();
        for (int alt : alternates(grammar.ruleStart[grammar.root])) {
            Stack s = Element.isEndOfSequence(grammar.types[alt]) ? Stack.EMPTY : stack(alt, Stack.EMPTY);
            addAll(start, expand(s));
        }
        this.initial = state(start);
    }

    GrammarState initial() {
        return initial;
    }

    /** The state after {@code cp}: each stack whose top class matches moves on; {@link #DEAD} when none does. */
    GrammarState next(GrammarState from, int cp) {
        // the common case without the lock: an ASCII step already taken (a reference read is atomic and the
        // state it points to was fully built before it was stored)
        if (cp >= 128 && from.uniformAboveAscii) {
            GrammarState any = from.nonAscii;
            if (any == null) {
                any = step(from, cp);
                from.nonAscii = any;
            }
            return any;
        }
        GrammarState known = cp >= 0 && cp < 128 ? from.ascii[cp] : null;
        return known != null ? known : step(from, cp);
    }

    private synchronized GrammarState step(GrammarState from, int cp) {
        GrammarState cached = cp >= 0 && cp < 128 ? from.ascii[cp] : from.other.get(cp);
        if (cached != null) {
            return cached;
        }
        List<Stack> out = new ArrayList<>();
        for (Stack s : from.stacks) {
            if (!s.isEmpty() && Element.isCharStart(grammar.types[s.pos]) && grammar.matchChar(s.pos, cp)) {
                addAll(out, afterChar(s));
            }
        }
        GrammarState next = out.isEmpty() ? DEAD : state(out);
        if (cp >= 0 && cp < 128) {
            from.ascii[cp] = next;
        } else {
            from.other.put(cp, next);
        }
        return next;
    }

    /** The state after a token matched by id: the stacks topped by a token element that matches it, moved on. */
    synchronized List<Stack> afterToken(GrammarState from, int token) {
        List<Stack> out = new ArrayList<>();
        for (Stack s : from.stacks) {
            if (!s.isEmpty() && matchesToken(s.pos, token)) {
                int after = s.pos + 1;
                Stack rest = Element.isEndOfSequence(grammar.types[after]) ? s.parent : stack(after, s.parent);
                addAll(out, expand(rest));
            }
        }
        return out;
    }

    boolean matchesToken(int pos, int token) {
        int type = grammar.types[pos];
        return type == Element.TOKEN ? grammar.values[pos] == token
                : type == Element.TOKEN_NOT && grammar.values[pos] != token;
    }

    /** Interns a set of stacks (any order, duplicates allowed) as a state. */
    synchronized GrammarState state(List<Stack> members) {
        if (members.isEmpty()) {
            return DEAD;
        }
        Stack[] sorted = members.stream().distinct().sorted((a, b) -> Integer.compare(a.id, b.id)).toArray(Stack[]::new);
        int[] ids = new int[sorted.length];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = sorted[i].id;
        }
        if (states.size() >= MAX_STATES) {
            states.clear(); // states in use stay valid; only the sharing is lost
        }
        return states.computeIfAbsent(new StateKey(ids), k -> new GrammarState(sorted, states.size(), grammar.types, grammar.values));
    }

    private Stack stack(int pos, Stack parent) {
        long key = ((long) parent.id << 32) | (pos & 0xFFFFFFFFL);
        Stack s = stacks.get(key);
        if (s == null) {
            s = new Stack(pos, parent, nextStackId++);
            stacks.put(key, s);
        }
        return s;
    }

    private Stack[] afterChar(Stack s) {
        if (s.afterChar == null) {
            int after = grammar.afterChar(s.pos);
            Stack rest = Element.isEndOfSequence(grammar.types[after]) ? s.parent : stack(after, s.parent);
            s.afterChar = expand(rest);
        }
        return s.afterChar;
    }

    /** The terminal-topped stacks {@code s} stands for: rule references replaced by each of their alternates. */
    private Stack[] expand(Stack s) {
        if (s.expanded != null) {
            return s.expanded;
        }
        List<Stack> out = new ArrayList<>();
        Set<Stack> seen = new HashSet<>();
        List<Stack> todo = new ArrayList<>(List.of(s));
        while (!todo.isEmpty()) {
            Stack cur = todo.removeLast();
            if (!seen.add(cur)) {
                continue;
            }
            if (cur.isEmpty() || grammar.types[cur.pos] != Element.RULE_REF) {
                if (!out.contains(cur)) {
                    out.add(cur);
                }
                continue;
            }
            int after = cur.pos + 1;
            Stack rest = Element.isEndOfSequence(grammar.types[after]) ? cur.parent : stack(after, cur.parent);
            for (int alt : alternates(grammar.ruleStart[grammar.values[cur.pos]])) {
                todo.add(Element.isEndOfSequence(grammar.types[alt]) ? rest : stack(alt, rest));
            }
        }
        s.expanded = out.toArray(Stack[]::new);
        return s.expanded;
    }

    /** The start positions of each alternate of the rule starting at {@code start}. */
    private List<Integer> alternates(int start) {
        List<Integer> out = new ArrayList<>();
        int p = start;
        while (true) {
            out.add(p);
            while (!Element.isEndOfSequence(grammar.types[p])) {
                p++;
            }
            if (grammar.types[p] != Element.ALT) {
                return out;
            }
            p++;
        }
    }

    private static void addAll(List<Stack> out, Stack[] more) {
        out.addAll(Arrays.asList(more));
    }
}
