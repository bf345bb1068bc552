package dev.lazarus.kt.model;

import java.util.Map;

/**
 * Everything the forward pass needs to know about a model's shape, read from GGUF metadata.
 *
 * @param keyLength    per-head key size (GQA), ignored for MLA
 * @param valueLength  per-head value size (GQA), ignored for MLA
 * @param moe          null for dense models
 * @param mla          null unless deepseek2-style latent attention
 */
public record ModelConfig(
        Architecture architecture,
        int blockCount,
        int embeddingLength,
        int headCount,
        int headCountKv,
        int keyLength,
        int valueLength,
        int feedForwardLength,
        int contextLength,
        float rmsEps,
        RopeConfig rope,
        MoeConfig moe,
        MlaConfig mla) {

    public static ModelConfig fromMetadata(Map<String, Object> metadata) {
        Metadata md = Metadata.of(metadata);
        Architecture arch = Architecture.fromGguf(md.architecture());
        int dim = md.requireInt("embedding_length");
        int heads = md.requireInt("attention.head_count");
        int headsKv = md.integer("attention.head_count_kv", heads);
        int keyLength = md.integer("attention.key_length", dim / heads);
        int valueLength = md.integer("attention.value_length", keyLength);
        int ffn = md.integer("feed_forward_length", 0);
        int context = md.integer("context_length", 4096);
        MlaConfig mla = arch == Architecture.DEEPSEEK2 ? MlaConfig.fromMetadata(md) : null;
        int ropeHeadDim = mla != null ? mla.qkRopeDim() : keyLength;
        return new ModelConfig(arch, md.requireInt("block_count"), dim, heads, headsKv, keyLength, valueLength, ffn,
                context, md.real("attention.layer_norm_rms_epsilon", 1e-6f),
                RopeConfig.fromMetadata(md, arch, ropeHeadDim, context), MoeConfig.fromMetadata(md, arch, ffn), mla);
    }

    public boolean isMoe() {
        return moe != null;
    }
}
