package dev.lazarus.kt.model;

import java.util.Map;

/**
 * Everything the forward pass needs to know about a model's shape, read from GGUF metadata.
 *
 * @param keyLength    per-head key size (GQA), ignored for MLA
 * @param valueLength  per-head value size (GQA), ignored for MLA
 * @param moe          null for dense models
 * @param mla          null unless deepseek2-style latent attention (with deepseek32's indexer sizes)
 * @param blockCount   the blocks the forward pass runs: glm4moe's trailing NextN (multi-token prediction) blocks,
 *                     counted in {@code block_count}, are left out as llama.cpp leaves them out (its
 *                     {@code draft-mtp} runs them apart, as {@link MtpBlock} does)
 * @param slidingWindow positions a sliding-window block attends (its own included), 0 when no block slides
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
        MlaConfig mla,
        int slidingWindow) {

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
        int blocks = md.requireInt("block_count") - md.integer("nextn_predict_layers", 0);
        MlaConfig mla = arch.latentAttention() ? MlaConfig.fromMetadata(md) : null;
        if (arch == Architecture.GLM_DSA && mla != null) {
            mla = mla.withGlmIndexerTypes(md, context, blocks);
        }
        int ropeHeadDim = mla != null ? mla.qkRopeDim() : keyLength;
        int window = arch.slidingWindowPattern() > 0 ? md.integer("attention.sliding_window", 0) : 0;
        return new ModelConfig(arch, blocks, dim, heads, headsKv, keyLength, valueLength, ffn,
                context, md.real("attention.layer_norm_rms_epsilon", 1e-6f),
                RopeConfig.fromMetadata(md, arch, ropeHeadDim, context), MoeConfig.fromMetadata(md, arch, ffn), mla,
                window);
    }

    /** Whether block {@code b} attends only the last {@link #slidingWindow} positions (llama.cpp's swa pattern). */
    public boolean isSlidingWindowBlock(int b) {
        int pattern = architecture.slidingWindowPattern();
        return slidingWindow > 0 && pattern > 0 && b % pattern < pattern - 1;
    }

    public boolean isMoe() {
        return moe != null;
    }
}
