package dev.lazarus.kt.grammar;

/**
 * One pushdown stack of grammar positions, as an interned linked list: the top is {@link #pos}, the rest is
 * {@link #parent}. Interning ({@link GrammarAutomaton#stack}) makes equal stacks the same object, so sets of stacks
 * compare by identity and what follows from a stack is computed once.
 */
final class Stack {

    /** The stack with nothing left to match: the grammar may end here. */
    static final Stack EMPTY = new Stack(-1, null, 0);

    final int pos;
    final Stack parent;
    final int id;
    /** The stacks this one expands into, each topped by a terminal (or empty); computed on first use. */
    Stack[] expanded;
    /** The expanded stacks after the top character class matched; computed on first use. */
    Stack[] afterChar;

    Stack(int pos, Stack parent, int id) {
        this.pos = pos;
        this.parent = parent;
        this.id = id;
    }

    boolean isEmpty() {
        return this == EMPTY;
    }
}
