package dev.lazarus.kt.grammar;

import dev.lazarus.kt.tokenizer.IntList;
import dev.lazarus.kt.tokenizer.Tokenizer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * A vocabulary prepared once for grammar masking: each token's text (control tokens written out, as llama.cpp's
 * grammar sees them) decoded into code points, and a trie over those code points so that one walk decides every
 * token sharing a prefix together. Nodes are numbered depth-first; the tokens are listed in the same order, so a
 * node's subtree is one contiguous run of that list. Immutable and thread-safe.
 */
public final class VocabIndex {

    final int vocabSize;
    /** The bytes of each token's text; the partial-character path decodes them again. */
    final byte[][] pieces;
    final boolean[] eog;
    /** Tokens in trie order, with the unfinished character each ends in ({@link Utf8Decode#pending()}). */
    final int[] order;
    final long[] orderPending;
    // per node: the code point leading to it, its first child (or -1), its next sibling (or -1),
    // the tokens that end at it [endFrom, endTo) and the end of its subtree's tokens
    final int[] nodeCp;
    final int[] firstChild;
    final int[] nextSibling;
    final int[] endFrom;
    final int[] endTo;
    final int[] subtreeTo;
    /** Tokens whose text starts with a UTF-8 continuation byte: the only ones that can finish a pending character. */
    final int[] continuationTokens;

    private VocabIndex(int vocabSize, byte[][] pieces, boolean[] eog, int[] order, long[] orderPending, Trie trie,
            int[] continuationTokens) {
        this.vocabSize = vocabSize;
        this.pieces = pieces;
        this.eog = eog;
        this.order = order;
        this.orderPending = orderPending;
        this.nodeCp = trie.cp.toArray();
        this.firstChild = trie.firstChild.toArray();
        this.nextSibling = trie.nextSibling.toArray();
        this.endFrom = trie.endFrom.toArray();
        this.endTo = trie.endTo.toArray();
        this.subtreeTo = trie.subtreeTo.toArray();
        this.continuationTokens = continuationTokens;
    }

    public static VocabIndex of(Tokenizer tokenizer) {
        int n = tokenizer.vocabSize();
        byte[][] pieces = new byte[n][];
        boolean[] eog = new boolean[n];
        List<Decoded> valid = new ArrayList<>(n);
        IntList continuation = new IntList();
        for (int id = 0; id < n; id++) {
            pieces[id] = tokenizer.tokenBytes(id, true);
            eog[id] = tokenizer.isEog(id);
            byte[] p = pieces[id];
            if (eog[id] || p.length == 0 || p[0] == 0) {
                continue; // end-of-generation tokens are decided apart; empty texts never match
            }
            if ((p[0] & 0xC0) == 0x80) {
                continuation.add(id);
            }
            Utf8Decode d = Utf8Decode.of(p, Utf8Decode.NONE);
            if (!d.invalid()) {
                valid.add(new Decoded(id, d.codePoints(), d.pending()));
            }
        }
        valid.sort(Comparator.comparing(Decoded::cps, Arrays::compare).thenComparingInt(Decoded::id));
        int[] order = new int[valid.size()];
        long[] pending = new long[valid.size()];
        for (int i = 0; i < order.length; i++) {
            order[i] = valid.get(i).id();
            pending[i] = valid.get(i).pending();
        }
        Trie trie = new Trie();
        trie.build(valid, 0, valid.size(), 0, -1);
        return new VocabIndex(n, pieces, eog, order, pending, trie, continuation.toArray());
    }

    private record Decoded(int id, int[] cps, long pending) {}

    /** Builds the node arrays depth-first over the sorted tokens. */
    private static final class Trie {
        final IntList cp = new IntList();
        final IntList firstChild = new IntList();
        final IntList nextSibling = new IntList();
        final IntList endFrom = new IntList();
        final IntList endTo = new IntList();
        final IntList subtreeTo = new IntList();

        /** Adds the node for tokens [from, to) that share their first {@code depth} code points; returns its index. */
        int build(List<Decoded> tokens, int from, int to, int depth, int leadingCp) {
            int node = cp.size();
            cp.add(leadingCp);
            firstChild.add(-1);
            nextSibling.add(-1);
            int i = from;
            while (i < to && tokens.get(i).cps().length == depth) {
                i++;
            }
            endFrom.add(from);
            endTo.add(i);
            subtreeTo.add(to);
            int previous = -1;
            while (i < to) {
                int c = tokens.get(i).cps()[depth];
                int j = i;
                while (j < to && tokens.get(j).cps()[depth] == c) {
                    j++;
                }
                int child = build(tokens, i, j, depth + 1, c);
                if (previous < 0) {
                    set(firstChild, node, child);
                } else {
                    set(nextSibling, previous, child);
                }
                previous = child;
                i = j;
            }
            return node;
        }

        private static void set(IntList list, int index, int value) {
            list.set(index, value);
        }
    }
}
