package dev.lazarus.kt.tensor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/** Little-endian unaligned accessors and the k-quant scale unpacking shared by the kernels. */
public final class Layouts {

    public static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private Layouts() {
    }

    public static float f16(MemorySegment s, long off) {
        return Float.float16ToFloat(s.get(I16, off));
    }

    public static int u8(MemorySegment s, long off) {
        return Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, off));
    }

    public static int i8(MemorySegment s, long off) {
        return s.get(ValueLayout.JAVA_BYTE, off);
    }

    /**
     * Scale {@code j} (0..7) of a Q4_K/Q5_K block: 12 bytes hold 8 six-bit scales and 8 six-bit mins;
     * groups 0-3 sit in the low 6 bits of bytes 0-3 (scales) and 4-7 (mins), groups 4-7 in the nibbles of
     * bytes 8-11 with their top two bits in the spare high bits of bytes 0-7 (ggml's get_scale_min_k4).
     */
    public static int kScale(MemorySegment s, long scales, int j) {
        return j < 4 ? u8(s, scales + j) & 63 : (u8(s, scales + j + 4) & 0xF) | ((u8(s, scales + j - 4) >> 6) << 4);
    }

    /** Min {@code j} (0..7) of a Q4_K/Q5_K block; see {@link #kScale}. */
    public static int kMin(MemorySegment s, long scales, int j) {
        return j < 4 ? u8(s, scales + j + 4) & 63 : (u8(s, scales + j + 4) >> 4) | ((u8(s, scales + j) >> 6) << 4);
    }

    /**
     * The eight 6-bit scales of a Q4_K/Q5_K super-block, one per byte (scale j in byte j), from its 12 scale bytes
     * read as {@code packed} (bytes 0-7) and {@code packedHigh} (bytes 8-11): the bits of {@link #kScale}, eight at once.
     */
    public static long kScales(long packed, int packedHigh) {
        long low = packed & 0x3F3F3F3FL;
        long high = (packedHigh & 0x0F0F0F0F | ((int) (packed >>> 6) & 0x03030303) << 4) & 0xFFFFFFFFL;
        return low | high << 32;
    }

    /** The eight 6-bit mins, one per byte; see {@link #kScales} and {@link #kMin}. */
    public static long kMins(long packed, int packedHigh) {
        long low = packed >>> 32 & 0x3F3F3F3FL;
        long high = (packedHigh >>> 4 & 0x0F0F0F0F | ((int) (packed >>> 38) & 0x03030303) << 4) & 0xFFFFFFFFL;
        return low | high << 32;
    }
}
