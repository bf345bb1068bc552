package dev.lazarus.kt.model;

import java.util.List;

/**
 * Multi-head latent attention (deepseek2) sizes.
 *
 * @param qLoraRank   rank of the query compression, 0 when queries are projected directly ("lite")
 * @param kvLoraRank  width of the compressed KV latent
 * @param qkNopeDim   per-head query/key dimensions without rope
 * @param qkRopeDim   per-head rotated dimensions (shared by all heads for keys)
 * @param valueDim    per-head value dimensions after decompression
 * @param indexer     deepseek32's lightning indexer; null without sparse attention
 */
public record MlaConfig(int qLoraRank, int kvLoraRank, int qkNopeDim, int qkRopeDim, int valueDim,
                        Indexer indexer) {

    /** Without an indexer (deepseek2). */
    public MlaConfig(int qLoraRank, int kvLoraRank, int qkNopeDim, int qkRopeDim, int valueDim) {
        this(qLoraRank, kvLoraRank, qkNopeDim, qkRopeDim, valueDim, null);
    }

    /**
     * DeepSeek Sparse Attention's lightning indexer: {@code heads} query heads of {@code keyDim} scoring one shared
     * key per position; each query attends the {@code topK} best-scored positions. {@code shared} marks the blocks
     * that run no indexer of their own but attend what the last block with one chose (GLM-5.2); null: none.
     */
    public record Indexer(int heads, int keyDim, int topK, boolean[] shared) {
        public Indexer {
            // the Hadamard rotation llama.cpp applies needs a power of two (its fwht)
            if (heads <= 0 || topK <= 0 || keyDim < 64 || Integer.bitCount(keyDim) != 1) {
                throw new ModelFormatException("indexer of " + heads + " heads of " + keyDim + ", top-k " + topK
                        + ": needs heads, a top-k and a key length that is a power of two from 64");
            }
            if (shared != null && shared.length > 0 && shared[0]) {
                throw new ModelFormatException("the first block shares an indexer no block before it has");
            }
        }

        /** Every block with its own indexer. */
        public Indexer(int heads, int keyDim, int topK) {
            this(heads, keyDim, topK, null);
        }

        /** Whether block {@code b} scores with its own indexer. */
        public boolean runsOwn(int b) {
            return shared == null || b >= shared.length || !shared[b];
        }

        /** Whether some block reuses another's selection. */
        public boolean shares() {
            if (shared != null) {
                for (boolean s : shared) {
                    if (s) {
                        return true;
                    }
                }
            }
            return false;
        }
    }

    /** Per-head key size as the attention score sees it before absorption. */
    public int keyDim() {
        return qkNopeDim + qkRopeDim;
    }

    /** From this training context on, llama.cpp takes a glm-dsa file without indexer types for GLM-5.2. */
    private static final int GLM_5_2_CONTEXT = 1 << 20;

    /**
     * This configuration with glm-dsa's indexer sharing among its {@code blocks}, as llama.cpp reads it: the
     * {@code attention.indexer.types} array (1 or "full": its own; 0 or "shared": the last full block's selection),
     * else every block its own below a context of 1M tokens (GLM-5, 5.1) and GLM-5.2's pattern from there (blocks 0
     * and 1 their own, then one in four from block 2).
     */
    MlaConfig withGlmIndexerTypes(Metadata md, int context, int blocks) {
        if (indexer == null) {
            return this;
        }
        boolean[] shared = new boolean[blocks];
        Object types = md.values().get(md.key("attention.indexer.types"));
        if (types instanceof List<?> list) {
            for (int b = 0; b < blocks && b < list.size(); b++) {
                shared[b] = !isFullIndexer(list.get(b));
            }
        } else if (types != null) {
            throw new ModelFormatException("attention.indexer.types is not an array: " + types);
        } else if (context >= GLM_5_2_CONTEXT) {
            for (int b = 2; b < blocks; b++) {
                shared[b] = (b - 2) % 4 != 0;
            }
        }
        return new MlaConfig(qLoraRank, kvLoraRank, qkNopeDim, qkRopeDim, valueDim,
                new Indexer(indexer.heads(), indexer.keyDim(), indexer.topK(), shared));
    }

    private static boolean isFullIndexer(Object type) {
        return "full".equals(type) || Boolean.TRUE.equals(type) || type instanceof Number n && n.longValue() != 0;
    }

    static MlaConfig fromMetadata(Metadata md) {
        int kvLora = md.integer("attention.kv_lora_rank", 0);
        if (kvLora == 0) {
            return null;
        }
        // Files converted for absorbed MLA carry the decompressed sizes in *_mla keys and the
        // cache sizes (kv_lora_rank + rope, kv_lora_rank) in key_length/value_length.
        int keyLength = md.integer("attention.key_length_mla", md.requireInt("attention.key_length"));
        int valueLength = md.integer("attention.value_length_mla", md.requireInt("attention.value_length"));
        int rope = md.requireInt("rope.dimension_count");
        Indexer indexer = md.number("attention.indexer.head_count").isEmpty() ? null
                : new Indexer(md.requireInt("attention.indexer.head_count"),
                        md.requireInt("attention.indexer.key_length"), md.requireInt("attention.indexer.top_k"));
        return new MlaConfig(md.integer("attention.q_lora_rank", 0), kvLora, keyLength - rope, rope, valueLength,
                indexer);
    }
}
