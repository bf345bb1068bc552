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
     * key per position; each query attends the {@code topK} best-scored positions.
     */
    public record Indexer(int heads, int keyDim, int topK) {
        public Indexer {
            // the Hadamard rotation llama.cpp applies needs a power of two (its fwht)
            if (heads <= 0 || topK <= 0 || keyDim < 64 || Integer.bitCount(keyDim) != 1) {
                throw new ModelFormatException("indexer of " + heads + " heads of " + keyDim + ", top-k " + topK
                        + ": needs heads, a top-k and a key length that is a power of two from 64");
            }
        }
    }

    /** Per-head key size as the attention score sees it before absorption. */
    public int keyDim() {
        return qkNopeDim + qkRopeDim;
    }

    /** llama.cpp's default for glm-dsa files without {@code attention.indexer.types}: GLM-5.2's shared indexers from this context on. */
    private static final int SHARED_INDEXER_CONTEXT = 1 << 20;

    /**
     * Refuses a glm-dsa file whose blocks share an indexer (GLM-5.2: a "shared" block reuses the previous full block's
     * top-k, as llama.cpp reads {@code attention.indexer.types}, or its default pattern for a context of 1M tokens or
     * more): every block here runs its own, so such a file is refused rather than computed otherwise.
     */
    static void requireOwnIndexers(Metadata md, int context) {
        Object types = md.values().get(md.key("attention.indexer.types"));
        boolean shared = types == null ? context >= SHARED_INDEXER_CONTEXT
                : !(types instanceof List<?> list) || list.stream().anyMatch(t -> !isFullIndexer(t));
        if (shared) {
            throw new ModelFormatException("glm-dsa blocks that share another block's indexer (GLM-5.2's "
                    + "attention.indexer.types, or a context of 1M tokens or more without it) are not supported yet");
        }
    }

    private static boolean isFullIndexer(Object type) {
        return "full".equals(type) || Boolean.TRUE.equals(type) || type instanceof Number n && n.longValue() == 1;
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
