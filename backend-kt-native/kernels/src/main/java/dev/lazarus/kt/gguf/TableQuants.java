package dev.lazarus.kt.gguf;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * ggml's 32-value blocks of 4-bit indices into a fixed table of values, with one scale per block, which the engine
 * multiplies against Q8_0 activations through the table's integers:
 * <pre>
 * IQ4_NL (18 B): f16 d, u8 qs[16]                       value = d · IQ4_NL_VALUES[index]
 * MXFP4  (17 B): u8 e (E8M0 exponent), u8 qs[16]         value = 2^(e - 128) · E2M1_VALUES_DOUBLED[index]
 * </pre>
 * Index j &lt; 16 of a block is the low nibble of {@code qs[j]}, index j + 16 its high nibble.
 */
public final class TableQuants {

    /**
     * OCP Microscaling FP4 (E2M1: sign, two exponent bits, one mantissa bit) values, doubled so that they are integers
     * ({@code 0, 0.5, 1, 1.5, 2, 3, 4, 6} and their negatives become {@code 0, 1, 2, 3, 4, 6, 8, 12}); the block scale
     * is halved to match, as ggml does ({@code kvalues_mxfp4}, {@code GGML_E8M0_TO_FP32_HALF}).
     */
    public static final byte[] E2M1_VALUES_DOUBLED = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

    private TableQuants() {
    }

    /** Whether {@code type} is one of these layouts. */
    public static boolean covers(GgmlType type) {
        return type == GgmlType.IQ4_NL || type == GgmlType.MXFP4;
    }

    /** The 32 integer values of the block at {@code blk} into {@code q}. */
    public static void codes(GgmlType type, MemorySegment s, long blk, int[] q) {
        byte[] table = type == GgmlType.MXFP4 ? E2M1_VALUES_DOUBLED : SubBlockQuants.IQ4_NL_VALUES;
        long qs = type == GgmlType.MXFP4 ? blk + 1 : blk + 2;
        for (int j = 0; j < 16; j++) {
            int b = Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, qs + j));
            q[j] = table[b & 0xF];
            q[j + 16] = table[b >> 4];
        }
    }

    /** The block's scale: IQ4_NL's f16 d, MXFP4's {@code 2^(e - 128)} (ggml's E8M0 to f32, halved; exact). */
    public static float scale(GgmlType type, MemorySegment s, long blk) {
        if (type == GgmlType.MXFP4) {
            return Math.scalb(1f, Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, blk)) - 128);
        }
        return GgmlCodec.f16(s, blk);
    }

    /** As ggml's dequantize_row_iq4_nl / _mxfp4: scale times table value. */
    static void decode(GgmlType type, MemorySegment src, long off, float[] dst, int dstOff, int count) {
        int[] q = new int[32];
        for (int b = 0; b < count / 32; b++) {
            long blk = off + (long) b * type.typeSize();
            codes(type, src, blk, q);
            float d = scale(type, src, blk);
            for (int i = 0; i < 32; i++) {
                dst[dstOff + 32 * b + i] = d * q[i];
            }
        }
    }
}
