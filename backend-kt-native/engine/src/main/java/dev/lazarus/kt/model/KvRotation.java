package dev.lazarus.kt.model;

/**
 * llama.cpp's attention rotation for a quantised KV cache: where K (or V) is stored as a block type and its heads are
 * a multiple of 64, queries and keys (values) are multiplied by an orthonormal Walsh-Hadamard matrix before the
 * store, which leaves every q·k unchanged in exact arithmetic but spreads outliers over the block a scale covers; with
 * rotated values the attended vector is rotated back (the matrix is its own inverse). K's matrix is the largest power
 * of two dividing the head (from 64), V's is 64. ggml-cpu computes the product as a fast Walsh-Hadamard transform
 * ({@code ggml_compute_forward_fwht}): each chunk scaled by {@code 1/sqrtf(n)} first, then butterflies
 * {@code (u + v, u - v)} over spans 1, 2, 4, ... ({@link #rotate}). llama-server's {@code LLAMA_ATTN_ROT_DISABLE=1}
 * turns it off there; this engine always rotates where llama-server does by default.
 */
final class KvRotation {

    /** The smallest rotation, and the head multiple a rotation needs. */
    static final int MIN = 64;

    private KvRotation() {}

    /** The rotation size for keys of a {@code keys} cache with heads of {@code headDim}; 0: none. */
    static int keyChunk(KvCacheType keys, int headDim) {
        if (!keys.quantized() || headDim % MIN != 0) {
            return 0;
        }
        int n = MIN;
        while (headDim % (2 * n) == 0) {
            n *= 2;
        }
        return n;
    }

    /** The rotation size for values of a {@code values} cache with heads of {@code headDim}; 0: none. */
    static int valueChunk(KvCacheType values, int headDim) {
        return values.quantized() && headDim % MIN == 0 ? MIN : 0;
    }

    /** Rotates {@code x[off..off+len)} in place, chunk by chunk of {@code n} (a power of two dividing len). */
    static void rotate(float[] x, int off, int len, int n) {
        float scale = 1.0f / (float) Math.sqrt(n);
        for (int c = off; c < off + len; c += n) {
            for (int j = c; j < c + n; j++) {
                x[j] *= scale;
            }
            for (int span = 1; span < n; span <<= 1) {
                for (int i = c; i < c + n; i += 2 * span) {
                    for (int j = i; j < i + span; j++) {
                        float u = x[j], v = x[j + span];
                        x[j] = u + v;
                        x[j + span] = u - v;
                    }
                }
            }
        }
    }
}
