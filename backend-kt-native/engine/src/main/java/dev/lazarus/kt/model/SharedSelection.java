package dev.lazarus.kt.model;

import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * GLM-5.2's shared indexers: the positions a block with its own indexer chose for each token of a batch, which the
 * blocks after it that have none attend too (llama.cpp's glm-dsa graph reuses the previous full block's top-k).
 * Keyed by the batch (a record of arrays: identity), so concurrent forward passes keep theirs apart.
 */
final class SharedSelection {

    private final Map<ForwardBatch, boolean[][]> chosen = Collections.synchronizedMap(new WeakHashMap<>());

    void put(ForwardBatch batch, boolean[][] keep) {
        chosen.put(batch, keep);
    }

    boolean[][] get(ForwardBatch batch) {
        boolean[][] keep = chosen.get(batch);
        if (keep == null) {
            throw new IllegalStateException("a block sharing an indexer ran before any block with its own");
        }
        return keep;
    }
}
