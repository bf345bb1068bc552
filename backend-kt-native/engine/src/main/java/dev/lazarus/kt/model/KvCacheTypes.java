package dev.lazarus.kt.model;

/**
 * The types of a KV cache's keys and of its values ({@code -ctk}, {@code -ctv}). Where a block's values are a view of
 * its keys (absorbed MLA) they take the key type.
 */
public record KvCacheTypes(KvCacheType keys, KvCacheType values) {

    /** llama-server's default: F16 keys and values. */
    public static final KvCacheTypes F16 = new KvCacheTypes(KvCacheType.F16, KvCacheType.F16);

    @Override
    public String toString() {
        return "K " + keys.settingName() + ", V " + values.settingName();
    }
}
