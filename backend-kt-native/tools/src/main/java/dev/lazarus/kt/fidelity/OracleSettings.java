package dev.lazarus.kt.fidelity;

import dev.lazarus.kt.model.AttentionOrder;
import dev.lazarus.kt.model.KvCacheType;
import dev.lazarus.kt.model.KvCacheTypes;
import tools.jackson.databind.JsonNode;

/**
 * The oracle's settings that decide the arithmetic the engine must reproduce, and where each came from. Debian's
 * llama-server (b11669) reports in {@code /props} its build, the per-slot context and the slots, not flash attention,
 * its thread count or the KV cache types: those are stated on the command line ({@code --oracle-fa},
 * {@code --oracle-threads}, {@code --oracle-ctk}, {@code --oracle-ctv}) or taken as llama-server's defaults ({@code -fa auto}, on on a CPU; the physical cores;
 * F16), and the report says which.
 *
 * @param build          {@code build_info}, or "unknown"
 * @param contextPerSlot {@code default_generation_settings.n_ctx}; 0 if not reported
 * @param slots          {@code total_slots}; 0 if not reported
 * @param flashAttention whether the oracle runs flash attention
 * @param threads        its thread count (the split of a flash-attention decode step)
 * @param stated         whether flash attention and threads were stated rather than assumed
 * @param cacheTypes     its KV cache types ({@code -ctk}, {@code -ctv})
 * @param cacheStated    whether both cache types were stated rather than assumed (F16)
 */
public record OracleSettings(String build, int contextPerSlot, int slots, boolean flashAttention, int threads,
                             boolean stated, KvCacheTypes cacheTypes, boolean cacheStated) {

    /** From {@code /props} ({@code props} may be a missing node) and what the command line stated (null: default). */
    public static OracleSettings of(JsonNode props, Boolean flashAttention, Integer threads, int defaultThreads,
                                    KvCacheType keys, KvCacheType values) {
        return new OracleSettings(props.path("build_info").asString("unknown"),
                props.path("default_generation_settings").path("n_ctx").asInt(0), props.path("total_slots").asInt(0),
                flashAttention == null || flashAttention, threads == null ? defaultThreads : threads,
                flashAttention != null && threads != null,
                new KvCacheTypes(keys == null ? KvCacheType.F16 : keys, values == null ? KvCacheType.F16 : values),
                keys != null && values != null);
    }

    /** The order the engine computes attention in to be compared with this oracle. */
    public AttentionOrder order() {
        return flashAttention ? AttentionOrder.flash(threads) : AttentionOrder.NON_FLASH;
    }

    @Override
    public String toString() {
        return "%s, n_ctx %d per slot, %d slot%s; -fa %s -t %d (%s); -ctk %s -ctv %s (%s)".formatted(build,
                contextPerSlot, slots, slots == 1 ? "" : "s", flashAttention ? "on" : "off", threads,
                stated ? "flash attention and threads as stated" : "flash attention and threads not reported by /props: "
                        + "as stated, else llama-server's defaults",
                cacheTypes.keys().settingName(), cacheTypes.values().settingName(),
                cacheStated ? "cache types as stated" : "cache types not reported by /props: as stated, else f16");
    }
}
