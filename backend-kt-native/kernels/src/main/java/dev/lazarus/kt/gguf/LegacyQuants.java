package dev.lazarus.kt.gguf;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The legacy 32-value block types Q4_0, Q4_1, Q5_0 and Q5_1 (llama-quantize falls back to them for
 * tensors whose rows are not multiples of 256). A block starts with an f16 scale {@code d}, then for the
 * affine "_1" types an f16 offset {@code m}, then for the 5-bit types 32 high bits (a little-endian
 * uint32, bit j for value j), then 16 bytes of nibbles: byte j holds value j in its low and value j+16
 * in its high nibble. Symmetric types store {@code q - 8} / {@code q - 16}; affine ones {@code d·q + m}.
 * Encoders follow ggml's reference quantizers (the rounding llama-quantize uses without an imatrix).
 */
final class LegacyQuants {

    private LegacyQuants() {
    }

    /** Whether the type is one of the four this class handles. */
    static boolean handles(GgmlType type) {
        return type == GgmlType.Q4_0 || type == GgmlType.Q4_1 || type == GgmlType.Q5_0 || type == GgmlType.Q5_1;
    }

    static boolean affine(GgmlType type) {
        return type == GgmlType.Q4_1 || type == GgmlType.Q5_1;
    }

    static boolean fiveBit(GgmlType type) {
        return type == GgmlType.Q5_0 || type == GgmlType.Q5_1;
    }

    /** Byte offset of the 16 nibble bytes within a block. */
    static int nibblesAt(GgmlType type) {
        return 2 + (affine(type) ? 2 : 0) + (fiveBit(type) ? 4 : 0);
    }

    /** The unsigned quant (0..15 or 0..31) of value {@code e} (0..31) of the block at {@code block}. */
    static int quant(GgmlType type, MemorySegment s, long block, int e) {
        int b = Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, block + nibblesAt(type) + (e & 15)));
        int q = e < 16 ? b & 0xF : b >> 4;
        if (fiveBit(type)) {
            int qh = s.get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN), block + (affine(type) ? 4 : 2));
            q |= ((qh >>> e) & 1) << 4;
        }
        return q;
    }

    /** What the symmetric types subtract from the stored quant; 0 for the affine ones. */
    static int offset(GgmlType type) {
        return switch (type) {
            case Q4_0 -> 8;
            case Q5_0 -> 16;
            default -> 0;
        };
    }

    static void decode(GgmlType type, MemorySegment src, long off, float[] dst, int dstOff, int count) {
        int size = type.typeSize();
        int bias = offset(type);
        for (int b = 0; b < count / 32; b++) {
            long block = off + (long) size * b;
            float d = GgmlCodec.f16(src, block);
            float m = affine(type) ? GgmlCodec.f16(src, block + 2) : 0;
            for (int e = 0; e < 32; e++) {
                float v = (quant(type, src, block, e) - bias) * d;
                dst[dstOff + 32 * b + e] = affine(type) ? v + m : v;
            }
        }
    }

    static void encode(GgmlType type, float[] x, int off, int count, MemorySegment dst, long dstOff) {
        int levels = fiveBit(type) ? 32 : 16;
        int[] q = new int[32];
        for (int b = 0; b < count / 32; b++) {
            int xo = off + 32 * b;
            long block = dstOff + (long) type.typeSize() * b;
            if (affine(type)) {
                float min = Float.POSITIVE_INFINITY, max = Float.NEGATIVE_INFINITY;
                for (int i = 0; i < 32; i++) {
                    min = Math.min(min, x[xo + i]);
                    max = Math.max(max, x[xo + i]);
                }
                float d = (max - min) / (levels - 1);
                float id = d != 0 ? 1 / d : 0;
                for (int i = 0; i < 32; i++) {
                    // ggml truncates (x - min)·id + 0.5 towards zero: round half up for these non-negatives
                    q[i] = Math.min(levels - 1, (int) ((x[xo + i] - min) * id + 0.5f));
                }
                dst.set(GgmlCodec.I16, block, Float.floatToFloat16(d));
                dst.set(GgmlCodec.I16, block + 2, Float.floatToFloat16(min));
            } else {
                // the value of largest magnitude maps to -levels/2 exactly (its sign kept in d)
                float amax = 0, max = 0;
                for (int i = 0; i < 32; i++) {
                    if (Math.abs(x[xo + i]) > amax) {
                        amax = Math.abs(x[xo + i]);
                        max = x[xo + i];
                    }
                }
                float d = max / -(levels / 2);
                float id = d != 0 ? 1 / d : 0;
                for (int i = 0; i < 32; i++) {
                    // ggml: (int8_t)(x·id + levels/2 + 0.5): truncation of a value that is >= 0 up to rounding
                    q[i] = Math.min(levels - 1, (int) (x[xo + i] * id + (levels / 2 + 0.5f)));
                }
                dst.set(GgmlCodec.I16, block, Float.floatToFloat16(d));
            }
            int qh = 0;
            for (int j = 0; j < 16; j++) {
                dst.set(ValueLayout.JAVA_BYTE, block + nibblesAt(type) + j, (byte) ((q[j] & 0xF) | (q[j + 16] & 0xF) << 4));
                qh |= (q[j] >> 4) << j | (q[j + 16] >> 4) << (j + 16);
            }
            if (fiveBit(type)) {
                dst.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN), block + (affine(type) ? 4 : 2), qh);
            }
        }
    }
}
