package dev.lazarus.kt.model;

/**
 * Floats cached per position and block: {@code keyWidths[b]} key values and {@code valueWidths[b]}
 * value values. A value width of 0 means the block reads its values from the keys (absorbed MLA,
 * where the compressed latent is both). {@code recurrentWidths[b]}: floats of state a recurrent block keeps per
 * sequence whatever its length (a gated DeltaNet's), 0 for attention blocks.
 */
public record KvLayout(int[] keyWidths, int[] valueWidths, int[] recurrentWidths) {

    /** Attention blocks only. */
    public KvLayout(int[] keyWidths, int[] valueWidths) {
        this(keyWidths, valueWidths, new int[keyWidths.length]);
    }

    /**
     * Whether some block keeps a state that cannot be cut back to an earlier position: such a cache serves as a
     * prefix only whole.
     */
    public boolean hasRecurrentState() {
        for (int w : recurrentWidths) {
            if (w > 0) {
                return true;
            }
        }
        return false;
    }

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
