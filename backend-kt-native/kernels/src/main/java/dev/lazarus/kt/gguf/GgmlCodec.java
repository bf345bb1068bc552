package dev.lazarus.kt.gguf;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Converts between f32 values and the block layouts of ggml's tensor types: the encoders used by
 * {@link GgufWriter} and the plain scalar decoders (dequantizers) that serve as the reference for the
 * kernels. Encoding and decoding work on whole blocks; counts must be multiples of the block size.
 *
 * <p>Quantizers aim at a correct layout with reasonable error, not at llama-quantize's optimal
 * search: Q8_0 matches ggml's reference quantizer exactly, the k-quants use min/max scales.
 */
public final class GgmlCodec {

    static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private GgmlCodec() {
    }

    /** Encodes {@code count} values from {@code src[srcOffset]} into {@code dst} at {@code dstOffset}. */
    public static void encode(GgmlType type, float[] src, int srcOffset, int count, MemorySegment dst, long dstOffset) {
        checkBlocks(type, count);
        switch (type) {
            case F32 -> {
                for (int i = 0; i < count; i++) {
                    dst.set(F32, dstOffset + 4L * i, src[srcOffset + i]);
                }
            }
            case F16 -> {
                for (int i = 0; i < count; i++) {
                    dst.set(I16, dstOffset + 2L * i, Float.floatToFloat16(src[srcOffset + i]));
                }
            }
            case BF16 -> {
                for (int i = 0; i < count; i++) {
                    dst.set(I16, dstOffset + 2L * i, f32ToBf16(src[srcOffset + i]));
                }
            }
            case Q8_0 -> {
                for (int b = 0; b < count / 32; b++) {
                    encodeQ8_0Block(src, srcOffset + 32 * b, dst, dstOffset + 34L * b);
                }
            }
            case Q4_K, Q5_K, Q6_K -> KQuants.encode(type, src, srcOffset, count, dst, dstOffset);
            case Q4_0, Q4_1, Q5_0, Q5_1 -> LegacyQuants.encode(type, src, srcOffset, count, dst, dstOffset);
            case IQ4_NL -> TableQuants.encodeIq4Nl(src, srcOffset, count, dst, dstOffset);
            default -> throw unsupported(type);
        }
    }

    /** Encodes a whole array into a new byte array. */
    public static byte[] encode(GgmlType type, float[] values) {
        byte[] out = new byte[Math.toIntExact(type.bytesFor(values.length))];
        encode(type, values, 0, values.length, MemorySegment.ofArray(out), 0);
        return out;
    }

    /** Decodes {@code count} values stored at {@code srcOffset} of {@code src} into {@code dst[dstOffset]}. */
    public static void decode(GgmlType type, MemorySegment src, long srcOffset, float[] dst, int dstOffset, int count) {
        checkBlocks(type, count);
        switch (type) {
            case F32 -> {
                for (int i = 0; i < count; i++) {
                    dst[dstOffset + i] = src.get(F32, srcOffset + 4L * i);
                }
            }
            case F16 -> {
                for (int i = 0; i < count; i++) {
                    dst[dstOffset + i] = Float.float16ToFloat(src.get(I16, srcOffset + 2L * i));
                }
            }
            case BF16 -> {
                for (int i = 0; i < count; i++) {
                    dst[dstOffset + i] = bf16ToF32(src.get(I16, srcOffset + 2L * i));
                }
            }
            case Q8_0 -> {
                for (int b = 0; b < count / 32; b++) {
                    long block = srcOffset + 34L * b;
                    float d = f16(src, block);
                    for (int i = 0; i < 32; i++) {
                        dst[dstOffset + 32 * b + i] = d * src.get(ValueLayout.JAVA_BYTE, block + 2 + i);
                    }
                }
            }
            case Q4_K, Q5_K, Q6_K -> KQuants.decode(type, src, srcOffset, dst, dstOffset, count);
            case Q2_K, Q3_K, IQ4_XS -> SubBlockQuants.decode(type, src, srcOffset, dst, dstOffset, count);
            case IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M -> GridQuants.decode(type, src, srcOffset, dst, dstOffset, count);
            case IQ4_NL, MXFP4 -> TableQuants.decode(type, src, srcOffset, dst, dstOffset, count);
            case Q4_0, Q4_1, Q5_0, Q5_1 -> LegacyQuants.decode(type, src, srcOffset, dst, dstOffset, count);
            default -> throw unsupported(type);
        }
    }

    /** f32 to bf16 bits, rounding to nearest even and keeping NaNs quiet, as ggml's GGML_FP32_TO_BF16. */
    public static short f32ToBf16(float f) {
        int bits = Float.floatToRawIntBits(f);
        if ((bits & 0x7fffffff) > 0x7f800000) {
            return (short) ((bits >>> 16) | 64);
        }
        return (short) ((bits + (0x7fff + ((bits >>> 16) & 1))) >>> 16);
    }

    public static float bf16ToF32(short bits) {
        return Float.intBitsToFloat((bits & 0xffff) << 16);
    }

    /** The fp16 value at {@code offset}, widened to f32. */
    static float f16(MemorySegment seg, long offset) {
        return Float.float16ToFloat(seg.get(I16, offset));
    }

    /** ggml's reference Q8_0 quantizer: scale amax/127 stored as fp16, values rounded half away from zero. */
    private static void encodeQ8_0Block(float[] x, int off, MemorySegment dst, long block) {
        float amax = 0;
        for (int i = 0; i < 32; i++) {
            amax = Math.max(amax, Math.abs(x[off + i]));
        }
        float d = amax / 127;
        float id = d != 0 ? 1 / d : 0;
        dst.set(I16, block, Float.floatToFloat16(d));
        for (int i = 0; i < 32; i++) {
            dst.set(ValueLayout.JAVA_BYTE, block + 2 + i, (byte) roundHalfAway(x[off + i] * id));
        }
    }

    /** C's roundf. */
    static int roundHalfAway(float v) {
        return (int) Math.copySign(Math.floor(Math.abs(v) + 0.5), v);
    }

    private static void checkBlocks(GgmlType type, int count) {
        if (count % type.blockSize() != 0) {
            throw new IllegalArgumentException(
                    "%d values is not a multiple of the %s block size %d".formatted(count, type, type.blockSize()));
        }
    }

    static GgufException unsupported(GgmlType type) {
        return new GgufException("type " + type + " cannot be encoded or decoded here (encoded: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q4_K, Q5_K, Q6_K; decoded also: Q2_K, Q3_K, IQ4_XS, MXFP4, IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S)");
    }
}
