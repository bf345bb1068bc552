package dev.lazarus.kt.model;

import java.util.Objects;

/**
 * The tokens one forward pass computes: any mix of sequences and positions (decode steps of many
 * sequences, a chunk of one prompt, or both). Tokens of one sequence must come in increasing
 * position order; each token attends to its own sequence's cache up to and including its position.
 *
 * @param tokens     token ids
 * @param positions  position of each token in its sequence
 * @param caches     the sequence cache each token belongs to
 * @param wantLogits whether the caller needs this token's logits (the last prompt token, decode tokens)
 */
public record ForwardBatch(int[] tokens, int[] positions, KvCache[] caches, boolean[] wantLogits) {

    public ForwardBatch {
        Objects.requireNonNull(tokens);
        if (positions.length != tokens.length || caches.length != tokens.length || wantLogits.length != tokens.length) {
            throw new IllegalArgumentException("batch arrays differ in length");
        }
    }

    public int size() {
        return tokens.length;
    }

    /** One token of one sequence, wanting logits: a plain decode step. */
    public static ForwardBatch single(int token, int position, KvCache cache) {
        return new ForwardBatch(new int[] {token}, new int[] {position}, new KvCache[] {cache}, new boolean[] {true});
    }
}
