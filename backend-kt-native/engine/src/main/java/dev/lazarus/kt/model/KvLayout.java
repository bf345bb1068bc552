package dev.lazarus.kt.model;

/**
 * Floats cached per position and block: {@code keyWidths[b]} key values and {@code valueWidths[b]}
 * value values. A value width of 0 means the block reads its values from the keys (absorbed MLA,
 * where the compressed latent is both).
 */
public record KvLayout(int[] keyWidths, int[] valueWidths) {

    public int blocks() {
        return keyWidths.length;
    }

    /** Bytes one position takes in an F16 cache (what llama-server would allocate). */
    public long f16BytesPerPosition() {
        return bytesPerPosition(KvCacheTypes.F16);
    }

    /** Bytes one position (token) takes in a cache of {@code types}, as llama-server allocates them. */
    public long bytesPerPosition(KvCacheTypes types) {
        long n = 0;
        for (int b = 0; b < keyWidths.length; b++) {
            n += types.keys().bytesFor(keyWidths[b]) + types.values().bytesFor(valueWidths[b]);
        }
        return n;
    }
}
