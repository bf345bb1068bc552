package dev.lazarus.kt.model;

/**
 * Multi-head latent attention (deepseek2) sizes.
 *
 * @param qLoraRank   rank of the query compression, 0 when queries are projected directly ("lite")
 * @param kvLoraRank  width of the compressed KV latent
 * @param qkNopeDim   per-head query/key dimensions without rope
 * @param qkRopeDim   per-head rotated dimensions (shared by all heads for keys)
 * @param valueDim    per-head value dimensions after decompression
 */
public record MlaConfig(int qLoraRank, int kvLoraRank, int qkNopeDim, int qkRopeDim, int valueDim) {

    /** Per-head key size as the attention score sees it before absorption. */
    public int keyDim() {
        return qkNopeDim + qkRopeDim;
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
        return new MlaConfig(md.integer("attention.q_lora_rank", 0), kvLora, keyLength - rope, rope, valueLength);
    }
}
