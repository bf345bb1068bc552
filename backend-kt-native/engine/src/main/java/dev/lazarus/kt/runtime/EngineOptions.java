package dev.lazarus.kt.runtime;

import dev.lazarus.kt.model.KvCacheTypes;

/**
 * How the engine runs.
 *
 * @param contextSize        positions one sequence may hold (prompt + generated)
 * @param maxSequences       sequences decoded together; more wait in the queue
 * @param maxQueued          waiting sequences before new ones are refused as overloaded
 * @param maxBatchTokens     tokens one forward pass may compute (decode tokens + prompt chunks)
 * @param prefixCacheEntries finished sequences whose caches are kept for prompt-prefix reuse (0: off)
 * @param cacheTypes         the KV cache's key and value types ({@code cache-type-k}, {@code cache-type-v})
 */
public record EngineOptions(int contextSize, int maxSequences, int maxQueued, int maxBatchTokens,
                            int prefixCacheEntries, KvCacheTypes cacheTypes) {

    /** With llama-server's default F16 KV cache. */
    public EngineOptions(int contextSize, int maxSequences, int maxQueued, int maxBatchTokens, int prefixCacheEntries) {
        this(contextSize, maxSequences, maxQueued, maxBatchTokens, prefixCacheEntries, KvCacheTypes.F16);
    }

    public EngineOptions {
        if (contextSize < 2 || maxSequences < 1 || maxQueued < 0 || maxBatchTokens < maxSequences
                || prefixCacheEntries < 0 || cacheTypes == null) {
            throw new IllegalArgumentException("invalid engine options: context " + contextSize + ", sequences "
                    + maxSequences + ", queue " + maxQueued + ", batch " + maxBatchTokens + ", prefix cache "
                    + prefixCacheEntries);
        }
    }

    /**
     * Prompts are fed in llama-server's ubatches (its {@code -ub} default, 512 tokens): flash attention rounds a prompt
     * token by the size of the batch it ran in (tiled from 64 tokens on), so the same batches give the same numbers.
     */
    public static EngineOptions defaults(int contextSize, int maxSequences) {
        return new EngineOptions(contextSize, maxSequences, 64, Math.max(512, maxSequences), Math.max(4, maxSequences));
    }
}
