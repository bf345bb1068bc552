package dev.lazarus.kt.gguf;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * ggml's 256-value super-blocks of small integer values with an integer scale per sub-block, which the engine
 * multiplies against Q8_K activations through the same integers ({@link #codes}, {@link #scales}, {@link #mins}):
 * <pre>
 * Q2_K (84 B):   u8 scales[16] (low nibble scale, high nibble min), u8 qs[64] (2 bits), f16 d, f16 dmin
 * Q3_K (110 B):  u8 hmask[32] (3rd bits), u8 qs[64] (low 2 bits), u8 scales[12] (16 × 6 bits), f16 d
 * IQ4_XS (136 B): f16 d, u16 scales_h (high 2 bits), u8 scales_l[4] (low 4 bits), u8 qs[128] (4-bit indices)
 * </pre>
 * Q2_K/Q3_K value {@code e = 128·h + 32·g + l} takes bits {@code 2g..2g+1} of {@code qs[32h + l]}; Q3_K's third bit
 * is bit {@code 4h + g} of {@code hmask[l]}, a clear bit meaning the value is 4 less. Q2_K value e is
 * {@code d·sc·q - dmin·m} of sub-block e/16, Q3_K's {@code d·(sc - 32)·q}. IQ4_XS has a 6-bit scale per 32 values
 * ({@code ls - 32}); value {@code 32·i + j} is {@link #IQ4_NL_VALUES}[{@code qs[16i + j] & 15}] for j &lt; 16 and
 * [{@code qs[16i + j - 16] >> 4}] for the rest, times {@code d·(ls - 32)}. Scales are given per 16 values (IQ4_XS's
 * twice each), so one driver serves all three. {@link #decode} is ggml's dequantization, rounding step for step.
 */
public final class SubBlockQuants {

    /**
     * The sixteen signed values a 4-bit IQ4_NL / IQ4_XS index stands for (ggml's {@code kvalues_iq4nl}: part of the
     * format, a non-uniform grid denser near zero).
     */
    public static final byte[] IQ4_NL_VALUES = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

    private SubBlockQuants() {
    }

    /** Whether {@code type} is one of these layouts. */
    public static boolean covers(GgmlType type) {
        return type == GgmlType.Q2_K || type == GgmlType.Q3_K || type == GgmlType.IQ4_XS;
    }

    /** The 256 integer values of the super-block at {@code blk} (Q2_K 0..3, Q3_K -4..3, IQ4_XS -127..113) into {@code q}. */
    public static void codes(GgmlType type, MemorySegment s, long blk, int[] q) {
        if (type == GgmlType.IQ4_XS) {
            for (int i = 0; i < 8; i++) {
                for (int j = 0; j < 16; j++) {
                    int b = u8(s, blk + 8 + 16L * i + j);
                    q[32 * i + j] = IQ4_NL_VALUES[b & 0xF];
                    q[32 * i + j + 16] = IQ4_NL_VALUES[b >> 4];
                }
            }
            return;
        }
        long qs = type == GgmlType.Q2_K ? blk + 16 : blk + 32;
        for (int h = 0; h < 2; h++) {
            for (int l = 0; l < 32; l++) {
                int bits = u8(s, qs + 32L * h + l);
                int hm = type == GgmlType.Q3_K ? u8(s, blk + l) : 0;
                for (int g = 0; g < 4; g++) {
                    int v = (bits >> (2 * g)) & 3;
                    if (type == GgmlType.Q3_K && ((hm >> (4 * h + g)) & 1) == 0) {
                        v -= 4;
                    }
                    q[128 * h + 32 * g + l] = v;
                }
            }
        }
    }

    /** The sixteen scales, one per 16 values (Q2_K 0..15, Q3_K and IQ4_XS -32..31), into {@code sc}. */
    public static void scales(GgmlType type, MemorySegment s, long blk, int[] sc) {
        switch (type) {
            case Q2_K -> {
                for (int i = 0; i < 16; i++) {
                    sc[i] = u8(s, blk + i) & 0xF;
                }
            }
            case Q3_K -> {
                long at = blk + 96; // six bits each: the low four in a nibble of bytes 0-7, the high two in bytes 8-11
                for (int i = 0; i < 16; i++) {
                    int low = i < 8 ? u8(s, at + i) & 0xF : u8(s, at + i - 8) >> 4;
                    int high = (u8(s, at + 8 + i % 4) >> (2 * (i / 4))) & 3;
                    sc[i] = (low | high << 4) - 32;
                }
            }
            case IQ4_XS -> {
                int high = Short.toUnsignedInt(s.get(I16, blk + 2));
                for (int i = 0; i < 8; i++) {
                    int low = (u8(s, blk + 4 + i / 2) >> (4 * (i % 2))) & 0xF;
                    sc[2 * i] = sc[2 * i + 1] = (low | ((high >> (2 * i)) & 3) << 4) - 32;
                }
            }
            default -> throw new IllegalArgumentException("not a sub-block layout: " + type);
        }
    }

    /** Q2_K's sixteen sub-block mins (0..15) into {@code m}; the others have none (zeros). */
    public static void mins(GgmlType type, MemorySegment s, long blk, int[] m) {
        for (int i = 0; i < 16; i++) {
            m[i] = type == GgmlType.Q2_K ? u8(s, blk + i) >> 4 : 0;
        }
    }

    /** The super-block scale d. */
    public static float d(GgmlType type, MemorySegment s, long blk) {
        return GgmlCodec.f16(s, switch (type) {
            case Q2_K -> blk + 80;
            case Q3_K -> blk + 108;
            default -> blk;
        });
    }

    /** Q2_K's super-block min scale dmin; 0 for the others. */
    public static float dmin(GgmlType type, MemorySegment s, long blk) {
        return type == GgmlType.Q2_K ? GgmlCodec.f16(s, blk + 82) : 0f;
    }

    /** As ggml's dequantize_row_q2_K / _q3_K / _iq4_xs: the sub-block's {@code d·sc} (and {@code dmin·m}) once, then per value. */
    static void decode(GgmlType type, MemorySegment src, long off, float[] dst, int dstOff, int count) {
        int[] q = new int[256], sc = new int[16], m = new int[16];
        for (int b = 0; b < count / 256; b++) {
            long blk = off + (long) b * type.typeSize();
            codes(type, src, blk, q);
            scales(type, src, blk, sc);
            mins(type, src, blk, m);
            float d = d(type, src, blk), dmin = dmin(type, src, blk);
            for (int e = 0; e < 256; e++) {
                float dl = d * sc[e / 16];
                dst[dstOff + 256 * b + e] = type == GgmlType.Q2_K ? dl * q[e] - dmin * m[e / 16] : dl * q[e];
            }
        }
    }

    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

    private static int u8(MemorySegment s, long off) {
        return Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, off));
    }
}
