package dev.lazarus.kt.gguf;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The k-quant block layouts of ggml (256-value super-blocks):
 * <pre>
 * Q4_K (144 B): f16 d, f16 dmin, u8 scales[12] (8 × 6-bit scale + 6-bit min), u8 qs[128] (4-bit)
 * Q5_K (176 B): f16 d, f16 dmin, u8 scales[12], u8 qh[32] (5th bits), u8 qs[128]
 * Q6_K (210 B): u8 ql[128] (low 4 bits), u8 qh[64] (high 2 bits), i8 scales[16], f16 d
 * </pre>
 * Q4_K/Q5_K value {@code e} of a block is {@code d*sc[e/32]*q - dmin*m[e/32]}; Q6_K value {@code e} is
 * {@code d*scales[e/16]*(q-32)}. Within each 64 (Q4_K/Q5_K) or 128 (Q6_K) values the bits of
 * consecutive 32-value groups are interleaved into the same bytes, as documented at each accessor.
 */
final class KQuants {

    static final int QK = 256;

    private KQuants() {
    }

    // ---- layout accessors shared by the decoder and (through their documented formulas) the kernels ----

    /** 6-bit scale {@code j} (0..7) of a Q4_K/Q5_K block's packed 12 scale bytes at {@code scales}. */
    static int scale(MemorySegment s, long scales, int j) {
        return j < 4 ? u8(s, scales + j) & 63 : (u8(s, scales + j + 4) & 0xF) | ((u8(s, scales + j - 4) >> 6) << 4);
    }

    /** 6-bit min {@code j} (0..7) of a Q4_K/Q5_K block. */
    static int min(MemorySegment s, long scales, int j) {
        return j < 4 ? u8(s, scales + j + 4) & 63 : (u8(s, scales + j + 4) >> 4) | ((u8(s, scales + j) >> 6) << 4);
    }

    /** Q4_K/Q5_K low 4 bits of value {@code e}: group of 64 → 32 bytes, low nibbles first half, high nibbles second. */
    static int low4(MemorySegment s, long qs, int e) {
        int b = u8(s, qs + 32L * (e / 64) + e % 32);
        return (e % 64) < 32 ? b & 0xF : b >> 4;
    }

    /** Q5_K fifth bit of value {@code e}: bit {@code e/32} of qh[e%32]. */
    static int high1(MemorySegment s, long qh, int e) {
        return (u8(s, qh + e % 32) >> (e / 32)) & 1;
    }

    /** Q6_K 6-bit value {@code e} (0..63, stored with offset 32). */
    static int q6(MemorySegment s, long block, int e) {
        int half = e / 128, k = (e % 128) / 32, l = e % 32;
        int lo = u8(s, block + 64L * half + 32L * (k & 1) + l);
        int lo4 = k < 2 ? lo & 0xF : lo >> 4;
        int hi2 = (u8(s, block + 128 + 32L * half + l) >> (2 * k)) & 3;
        return lo4 | (hi2 << 4);
    }

    // ---- decode ----

    static void decode(GgmlType type, MemorySegment src, long off, float[] dst, int dstOff, int count) {
        for (int b = 0; b < count / QK; b++) {
            long block = off + (long) b * type.typeSize();
            int o = dstOff + b * QK;
            switch (type) {
                case Q4_K, Q5_K -> {
                    float d = GgmlCodec.f16(src, block), dmin = GgmlCodec.f16(src, block + 2);
                    long scales = block + 4;
                    boolean five = type == GgmlType.Q5_K;
                    long qs = five ? block + 48 : block + 16;
                    for (int e = 0; e < QK; e++) {
                        int q = low4(src, qs, e) + (five ? high1(src, block + 16, e) << 4 : 0);
                        dst[o + e] = d * scale(src, scales, e / 32) * q - dmin * min(src, scales, e / 32);
                    }
                }
                case Q6_K -> {
                    float d = GgmlCodec.f16(src, block + 208);
                    for (int e = 0; e < QK; e++) {
                        dst[o + e] = d * src.get(ValueLayout.JAVA_BYTE, block + 192 + e / 16) * (q6(src, block, e) - 32);
                    }
                }
                default -> throw GgmlCodec.unsupported(type);
            }
        }
    }

    // ---- encode ----

    static void encode(GgmlType type, float[] x, int off, int count, MemorySegment dst, long dstOff) {
        int[] q = new int[QK];
        for (int b = 0; b < count / QK; b++) {
            long block = dstOff + (long) b * type.typeSize();
            int xo = off + b * QK;
            switch (type) {
                case Q4_K -> encodeAffine(x, xo, 15, q, dst, block, block + 16, -1);
                case Q5_K -> encodeAffine(x, xo, 31, q, dst, block, block + 48, block + 16);
                case Q6_K -> encodeQ6(x, xo, q, dst, block);
                default -> throw GgmlCodec.unsupported(type);
            }
        }
    }

    /**
     * Q4_K / Q5_K: each 32-value group gets scale (max-min)/nmax and min -min (min clamped to ≤ 0, as
     * ggml), both quantized to 6 bits against the block's f16 d and dmin; values are then quantized
     * against the rounded scales so that decode error stays within half a step.
     */
    private static void encodeAffine(float[] x, int xo, int nmax, int[] q, MemorySegment dst, long block, long qs, long qh) {
        float[] scales = new float[8];
        float[] mins = new float[8];
        float maxScale = 0, maxMin = 0;
        for (int j = 0; j < 8; j++) {
            float lo = 0, hi = -Float.MAX_VALUE;
            for (int i = 0; i < 32; i++) {
                lo = Math.min(lo, x[xo + 32 * j + i]);
                hi = Math.max(hi, x[xo + 32 * j + i]);
            }
            scales[j] = (hi - lo) / nmax;
            mins[j] = -lo;
            maxScale = Math.max(maxScale, scales[j]);
            maxMin = Math.max(maxMin, mins[j]);
        }
        short dBits = Float.floatToFloat16(maxScale / 63), mBits = Float.floatToFloat16(maxMin / 63);
        float d = Float.float16ToFloat(dBits), dmin = Float.float16ToFloat(mBits);
        int[] sc = new int[8];
        int[] mn = new int[8];
        for (int j = 0; j < 8; j++) {
            sc[j] = d > 0 ? clamp(Math.round(scales[j] / d), 0, 63) : 0;
            // round the min up so that the lowest value stays representable (q ≥ 0)
            mn[j] = dmin > 0 ? clamp((int) Math.ceil(mins[j] / dmin), 0, 63) : 0;
            float step = d * sc[j], m = dmin * mn[j];
            for (int i = 0; i < 32; i++) {
                q[32 * j + i] = step > 0 ? clamp((int) Math.rint((x[xo + 32 * j + i] + m) / step), 0, nmax) : 0;
            }
        }
        dst.set(GgmlCodec.I16, block, dBits);
        dst.set(GgmlCodec.I16, block + 2, mBits);
        for (int j = 0; j < 4; j++) {
            put(dst, block + 4 + j, (sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
            put(dst, block + 8 + j, (mn[j] & 63) | ((mn[j + 4] >> 4) << 6));
            put(dst, block + 12 + j, (sc[j + 4] & 0xF) | ((mn[j + 4] & 0xF) << 4));
        }
        for (int c = 0; c < 4; c++) {
            for (int l = 0; l < 32; l++) {
                put(dst, qs + 32 * c + l, (q[64 * c + l] & 0xF) | ((q[64 * c + 32 + l] & 0xF) << 4));
            }
        }
        if (qh >= 0) {
            for (int l = 0; l < 32; l++) {
                int bits = 0;
                for (int g = 0; g < 8; g++) {
                    bits |= ((q[32 * g + l] >> 4) & 1) << g;
                }
                put(dst, qh + l, bits);
            }
        }
    }

    /**
     * Q6_K: each 16-value group's scale maps its largest-magnitude value to -32 (as ggml), the group
     * scales are quantized to int8 against the block's f16 d, values against the rounded scales.
     */
    private static void encodeQ6(float[] x, int xo, int[] q, MemorySegment dst, long block) {
        float[] scales = new float[16];
        float maxScale = 0;
        for (int j = 0; j < 16; j++) {
            float amax = 0, max = 0;
            for (int i = 0; i < 16; i++) {
                float v = x[xo + 16 * j + i];
                if (Math.abs(v) > amax) {
                    amax = Math.abs(v);
                    max = v;
                }
            }
            scales[j] = max / -32;
            if (Math.abs(scales[j]) > Math.abs(maxScale)) {
                maxScale = scales[j];
            }
        }
        float iscale = maxScale != 0 ? -128 / maxScale : 0;
        short dBits = Float.floatToFloat16(iscale != 0 ? 1 / iscale : 0);
        float d = Float.float16ToFloat(dBits);
        for (int j = 0; j < 16; j++) {
            int sc = clamp((int) Math.rint(iscale * scales[j]), -128, 127);
            dst.set(ValueLayout.JAVA_BYTE, block + 192 + j, (byte) sc);
            float step = d * sc;
            for (int i = 0; i < 16; i++) {
                q[16 * j + i] = (step != 0 ? clamp((int) Math.rint(x[xo + 16 * j + i] / step), -32, 31) : 0) + 32;
            }
        }
        dst.set(GgmlCodec.I16, block + 208, dBits);
        for (int h = 0; h < 2; h++) {
            for (int l = 0; l < 32; l++) {
                int q1 = q[128 * h + l], q2 = q[128 * h + 32 + l], q3 = q[128 * h + 64 + l], q4 = q[128 * h + 96 + l];
                put(dst, block + 64 * h + l, (q1 & 0xF) | ((q3 & 0xF) << 4));
                put(dst, block + 64 * h + 32 + l, (q2 & 0xF) | ((q4 & 0xF) << 4));
                put(dst, block + 128 + 32 * h + l, (q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
            }
        }
    }

    private static int clamp(int v, int lo, int hi) {
        return Math.max(lo, Math.min(hi, v));
    }

    private static int u8(MemorySegment s, long off) {
        return Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, off));
    }

    private static void put(MemorySegment s, long off, int v) {
        s.set(ValueLayout.JAVA_BYTE, off, (byte) v);
    }
}
