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

    /**
     * IQ4_NL as ggml's {@code quantize_row_iq4_nl_ref} (what ggml-cpu's {@code from_float} writes, e.g. into a KV
     * cache of that type; llama-quantize searches further scales): per block the scale {@code max / -127} picks each
     * value's nearest table entry, then the least-squares scale of those entries weighted by x² is stored. A block
     * below 1e-15 in magnitude gets scale 0 (its indices are then left as they are: they multiply a zero scale).
     */
    static void encodeIq4Nl(float[] x, int off, int count, MemorySegment dst, long dstOff) {
        byte[] values = SubBlockQuants.IQ4_NL_VALUES;
        int[] l = new int[32];
        for (int b = 0; b < count / 32; b++) {
            int xo = off + 32 * b;
            long blk = dstOff + 18L * b;
            float amax = 0, max = 0;
            for (int j = 0; j < 32; j++) {
                float ax = Math.abs(x[xo + j]);
                if (ax > amax) {
                    amax = ax;
                    max = x[xo + j];
                }
            }
            float d = 0;
            if (amax >= 1e-15f) {
                float id = 1 / (max / values[0]);
                float sumqx = 0, sumq2 = 0;
                for (int j = 0; j < 32; j++) {
                    float xj = x[xo + j];
                    l[j] = nearestIndex(values, id * xj);
                    float q = values[l[j]];
                    float w = xj * xj;
                    sumqx += w * q * xj;
                    sumq2 += w * q * q;
                }
                d = sumq2 > 0 ? sumqx / sumq2 : 0f;
            }
            dst.set(GgmlCodec.I16, blk, Float.floatToFloat16(d));
            for (int j = 0; j < 16; j++) {
                dst.set(ValueLayout.JAVA_BYTE, blk + 2 + j, (byte) (l[j] | l[j + 16] << 4));
            }
        }
    }

    /** ggml's {@code best_index_int8}: the index of the table value nearest {@code x}, the lower one on a tie. */
    private static int nearestIndex(byte[] values, float x) {
        int n = values.length;
        if (x <= values[0]) {
            return 0;
        }
        if (x >= values[n - 1]) {
            return n - 1;
        }
        int ml = 0, mu = n - 1;
        while (mu - ml > 1) {
            int mav = (ml + mu) / 2;
            if (x < values[mav]) {
                mu = mav;
            } else {
                ml = mav;
            }
        }
        return x - values[mu - 1] < values[mu] - x ? mu - 1 : mu;
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
