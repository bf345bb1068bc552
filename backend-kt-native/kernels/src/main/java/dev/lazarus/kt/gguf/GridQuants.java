package dev.lazarus.kt.gguf;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * ggml's I-quants: 256-value super-blocks whose groups of 4 or 8 values are indices into a fixed grid
 * ({@code iquant-grids.bin}, the format's codebooks; see the notice beside it), with sign bits and an odd integer scale
 * {@code 2·ls + 1} per 16 or 32 values. The engine multiplies them against Q8_K activations through the same integers
 * as ggml's vec_dot: {@link #codes} (grid value times sign), {@link #scales} (per 16 values), {@link #d}, and
 * {@link #post} (the power of two ggml multiplies the sum by: the scales are {@code (ls + ½)·¼} and the like). IQ1_S and
 * IQ1_M add a shift of ±⅛ to each grid value ({@link #deltas}), which ggml sums separately and adds times
 * {@link #DELTA}.
 * <pre>
 * IQ2_XXS (66 B): f16 d, u16 qs[32]: per 32 values two u32, four 8-bit grid indices, then four 7-bit sign indices and ls
 * IQ2_XS  (74 B): f16 d, u16 qs[32] (9-bit grid index, 7-bit sign index per 8 values), u8 scales[8] (two 4-bit ls)
 * IQ2_S   (82 B): f16 d, u8 qs[32] (low index bits), u8 signs[32], u8 qh[8] (high 2 bits), u8 scales[8]
 * IQ3_XXS (98 B): f16 d, u8 qs[64] (grid of 4), u32 scales_and_signs[8] (four 7-bit sign indices, ls)
 * IQ3_S  (110 B): f16 d, u8 qs[64], u8 qh[8] (9th index bit), u8 signs[32], u8 scales[4] (two 4-bit ls)
 * IQ1_S   (50 B): f16 d, u8 qs[32] (low index bits), u16 qh[8] (3 high bits per 8 values, 3-bit ls, delta sign)
 * IQ1_M   (56 B): u8 qs[32], u8 qh[16] (3 high bits and a delta sign per 8 values), u16 sc[4] (3-bit ls per 16
 *                 values; their top nibbles are the f16 d)
 * </pre>
 * {@link #decode} is ggml's dequantization, rounding step for step.
 */
public final class GridQuants {

    /** IQ1_S/IQ1_M's shift of each grid value (ggml's {@code IQ1S_DELTA}, {@code IQ1M_DELTA}). */
    public static final float DELTA = 0.125f;

    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private GridQuants() {
    }

    /** Whether {@code type} is one of these layouts. */
    public static boolean covers(GgmlType type) {
        return switch (type) {
            case IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M -> true;
            default -> false;
        };
    }

    /** The power of two the integer sum is multiplied by: the scales' {@code ¼ (ls + ½)} (IQ2), {@code ½ (ls + ½)} (IQ3_XXS). */
    public static float post(GgmlType type) {
        return switch (type) {
            case IQ2_XXS, IQ2_XS, IQ2_S -> 0.125f;
            case IQ3_XXS -> 0.25f;
            default -> 1f;
        };
    }

    /** The 256 signed grid values of the super-block at {@code blk} into {@code q}. */
    public static void codes(GgmlType type, MemorySegment s, long blk, int[] q) {
        Tables t = Tables.INSTANCE;
        switch (type) {
            case IQ2_XXS -> {
                for (int ib = 0; ib < 8; ib++) {
                    long at = blk + 2 + 8L * ib;
                    int aux = s.get(I32, at + 4);
                    for (int l = 0; l < 4; l++) {
                        grid8(t.iq2xxs[u8(s, at + l)], t.ksigns[(aux >>> 7 * l) & 127], q, 32 * ib + 8 * l);
                    }
                }
            }
            case IQ2_XS -> {
                for (int g = 0; g < 32; g++) {
                    int v = Short.toUnsignedInt(s.get(I16, blk + 2 + 2L * g));
                    grid8(t.iq2xs[v & 511], t.ksigns[v >>> 9], q, 8 * g);
                }
            }
            case IQ2_S -> {
                for (int g = 0; g < 32; g++) {
                    int ib = g / 4, l = g % 4;
                    int index = u8(s, blk + 2 + g) | ((u8(s, blk + 66 + ib) << (8 - 2 * l)) & 0x300);
                    grid8(t.iq2s[index], u8(s, blk + 34 + g), q, 8 * g);
                }
            }
            case IQ3_XXS -> {
                for (int ib = 0; ib < 8; ib++) {
                    int aux = s.get(I32, blk + 66 + 4L * ib);
                    for (int l = 0; l < 4; l++) {
                        int signs = t.ksigns[(aux >>> 7 * l) & 127];
                        grid4(t.iq3xxs[u8(s, blk + 2 + 8L * ib + 2 * l)], signs, q, 32 * ib + 8 * l);
                        grid4(t.iq3xxs[u8(s, blk + 2 + 8L * ib + 2 * l + 1)], signs >> 4, q, 32 * ib + 8 * l + 4);
                    }
                }
            }
            case IQ3_S -> {
                for (int ib = 0; ib < 8; ib++) {
                    int qh = u8(s, blk + 66 + ib);
                    for (int l = 0; l < 4; l++) {
                        int signs = u8(s, blk + 74 + 4L * ib + l);
                        long qs = blk + 2 + 8L * ib + 2 * l;
                        grid4(t.iq3s[u8(s, qs) | ((qh << (8 - 2 * l)) & 256)], signs, q, 32 * ib + 8 * l);
                        grid4(t.iq3s[u8(s, qs + 1) | ((qh << (7 - 2 * l)) & 256)], signs >> 4, q, 32 * ib + 8 * l + 4);
                    }
                }
            }
            case IQ1_S -> {
                for (int ib = 0; ib < 8; ib++) {
                    int qh = Short.toUnsignedInt(s.get(I16, blk + 34 + 2L * ib));
                    for (int l = 0; l < 4; l++) {
                        signed8(t.iq1s[u8(s, blk + 2 + 4L * ib + l) | (((qh >> 3 * l) & 7) << 8)], q, 32 * ib + 8 * l);
                    }
                }
            }
            case IQ1_M -> {
                for (int g = 0; g < 32; g++) {
                    int qh = u8(s, blk + 32 + g / 2) >> (4 * (g % 2));
                    signed8(t.iq1s[u8(s, blk + g) | ((qh & 7) << 8)], q, 8 * g);
                }
            }
            default -> throw new IllegalArgumentException("not an I-quant: " + type);
        }
    }

    /** The sixteen odd scales {@code 2·ls + 1}, one per 16 values, into {@code sc}. */
    public static void scales(GgmlType type, MemorySegment s, long blk, int[] sc) {
        for (int ib = 0; ib < 8; ib++) {
            int lo, hi;
            switch (type) {
                case IQ2_XXS -> lo = hi = s.get(I32, blk + 2 + 8L * ib + 4) >>> 28;
                case IQ3_XXS -> lo = hi = s.get(I32, blk + 66 + 4L * ib) >>> 28;
                case IQ2_XS, IQ2_S -> {
                    int b = u8(s, blk + (type == GgmlType.IQ2_XS ? 66 : 74) + ib);
                    lo = b & 0xF;
                    hi = b >> 4;
                }
                case IQ3_S -> lo = hi = (u8(s, blk + 106 + ib / 2) >> (4 * (ib % 2))) & 0xF;
                case IQ1_S -> lo = hi = (Short.toUnsignedInt(s.get(I16, blk + 34 + 2L * ib)) >> 12) & 7;
                case IQ1_M -> {
                    int w = Short.toUnsignedInt(s.get(I16, blk + 48 + 2L * (ib / 2)));
                    lo = (w >> (6 * (ib % 2))) & 7;
                    hi = (w >> (6 * (ib % 2) + 3)) & 7;
                }
                default -> throw new IllegalArgumentException("not an I-quant: " + type);
            }
            sc[2 * ib] = 2 * lo + 1;
            sc[2 * ib + 1] = 2 * hi + 1;
        }
    }

    /**
     * The sign (±1) of each value's {@link #DELTA} shift into {@code delta}: IQ1_S one per 32 values, IQ1_M one per 8;
     * zeros for the others.
     */
    public static void deltas(GgmlType type, MemorySegment s, long blk, int[] delta) {
        for (int g = 0; g < 32; g++) {
            int sign = switch (type) {
                case IQ1_S -> (s.get(I16, blk + 34 + 2L * (g / 4)) & 0x8000) != 0 ? -1 : 1;
                case IQ1_M -> ((u8(s, blk + 32 + g / 2) >> (4 * (g % 2))) & 8) != 0 ? -1 : 1;
                default -> 0;
            };
            for (int j = 0; j < 8; j++) {
                delta[8 * g + j] = sign;
            }
        }
    }

    /** The super-block scale d (IQ1_M's f16 assembled from the top nibbles of its four scale words). */
    public static float d(GgmlType type, MemorySegment s, long blk) {
        if (type == GgmlType.IQ1_M) {
            int bits = 0;
            for (int i = 0; i < 4; i++) {
                bits |= (Short.toUnsignedInt(s.get(I16, blk + 48 + 2L * i)) >> 12) << (4 * i);
            }
            return Float.float16ToFloat((short) bits);
        }
        return GgmlCodec.f16(s, blk);
    }

    /**
     * As ggml's dequantize_row_iq*: {@code d·(ls + ½)·¼} (IQ2; IQ3_XXS {@code ·½}), {@code d·(2·ls + 1)} (IQ3_S, IQ1)
     * once per sub-block, then times each grid value (IQ1: plus its shift).
     */
    static void decode(GgmlType type, MemorySegment src, long off, float[] dst, int dstOff, int count) {
        int[] q = new int[256], sc = new int[16], delta = new int[256];
        for (int b = 0; b < count / 256; b++) {
            long blk = off + (long) b * type.typeSize();
            codes(type, src, blk, q);
            scales(type, src, blk, sc);
            deltas(type, src, blk, delta);
            float d = d(type, src, blk);
            for (int e = 0; e < 256; e++) {
                int ls = sc[e / 16] >> 1;
                int at = dstOff + 256 * b + e;
                dst[at] = switch (type) {
                    case IQ2_XXS, IQ2_XS, IQ2_S -> d * (0.5f + ls) * 0.25f * q[e];
                    case IQ3_XXS -> d * (0.5f + ls) * 0.5f * q[e];
                    case IQ3_S -> d * sc[e / 16] * q[e];
                    default -> d * sc[e / 16] * (q[e] + DELTA * delta[e]);
                };
            }
        }
    }

    /**
     * The codebooks in the native kernels' layout ({@code lz_grid_tables.h}'s {@code lz_grids}: the u64 grids of IQ2_XXS,
     * IQ2_XS, IQ2_S, IQ1_S, the u32 grids of IQ3_XXS, IQ3_S, then the 128 sign bytes; little-endian), in a global
     * arena, written once: the C kernels read the tables of the resource rather than copies in their source.
     */
    public static MemorySegment nativeTables() {
        return NativeTables.SEGMENT;
    }

    private static final class NativeTables {
        static final MemorySegment SEGMENT = write(Tables.INSTANCE);

        private static MemorySegment write(Tables t) {
            long[][] wide = {t.iq2xxs, t.iq2xs, t.iq2s, t.iq1s};
            int[][] narrow = {t.iq3xxs, t.iq3s};
            long bytes = 8L * (256 + 512 + 1024 + 2048) + 4L * (256 + 512) + 128;
            MemorySegment s = java.lang.foreign.Arena.global().allocate(bytes, 64);
            long at = 0;
            for (long[] table : wide) {
                for (long v : table) {
                    s.set(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), at, v);
                    at += 8;
                }
            }
            for (int[] table : narrow) {
                for (int v : table) {
                    s.set(I32, at, v);
                    at += 4;
                }
            }
            for (int v : t.ksigns) {
                s.set(ValueLayout.JAVA_BYTE, at++, (byte) v);
            }
            return s;
        }
    }

    /** Eight unsigned grid bytes of {@code entry} into {@code q[at..]}, negated where {@code signs} has the bit. */
    private static void grid8(long entry, int signs, int[] q, int at) {
        for (int j = 0; j < 8; j++) {
            int v = (int) (entry >>> 8 * j) & 0xFF;
            q[at + j] = ((signs >> j) & 1) != 0 ? -v : v;
        }
    }

    private static void grid4(int entry, int signs, int[] q, int at) {
        for (int j = 0; j < 4; j++) {
            int v = (entry >>> 8 * j) & 0xFF;
            q[at + j] = ((signs >> j) & 1) != 0 ? -v : v;
        }
    }

    /** Eight signed grid bytes (IQ1's -1, 0, 1). */
    private static void signed8(long entry, int[] q, int at) {
        for (int j = 0; j < 8; j++) {
            q[at + j] = (byte) (entry >>> 8 * j);
        }
    }

    private static int u8(MemorySegment s, long off) {
        return Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, off));
    }

    /** The codebooks, read once from {@code iquant-grids.bin} (written by {@code scripts/iquant-grids.py}). */
    private static final class Tables {
        static final Tables INSTANCE = load();

        final int[] ksigns;
        final long[] iq2xxs, iq2xs, iq2s, iq1s;
        final int[] iq3xxs, iq3s;

        private Tables(Map<String, long[]> t) {
            ksigns = ints(t, "ksigns_iq2xs", 128);
            iq2xxs = longs(t, "iq2xxs_grid", 256);
            iq2xs = longs(t, "iq2xs_grid", 512);
            iq2s = longs(t, "iq2s_grid", 1024);
            iq3xxs = ints(t, "iq3xxs_grid", 256);
            iq3s = ints(t, "iq3s_grid", 512);
            iq1s = longs(t, "iq1s_grid", 2048);
        }

        private static Tables load() {
            try (InputStream in = GridQuants.class.getResourceAsStream("iquant-grids.bin")) {
                if (in == null) {
                    throw new IllegalStateException("resource iquant-grids.bin missing");
                }
                DataInputStream data = new DataInputStream(in);
                byte[] magic = data.readNBytes(8);
                if (!"IQGRIDS1".equals(new String(magic, StandardCharsets.US_ASCII))) {
                    throw new IllegalStateException("iquant-grids.bin: bad magic");
                }
                Map<String, long[]> tables = new HashMap<>();
                int count = Integer.reverseBytes(data.readInt());
                for (int i = 0; i < count; i++) {
                    String name = new String(data.readNBytes(data.readUnsignedByte()), StandardCharsets.US_ASCII);
                    int width = data.readUnsignedByte();
                    long[] values = new long[Integer.reverseBytes(data.readInt())];
                    for (int j = 0; j < values.length; j++) {
                        long v = 0;
                        for (int b = 0; b < width; b++) {
                            v |= (long) data.readUnsignedByte() << (8 * b);
                        }
                        values[j] = v;
                    }
                    tables.put(name, values);
                }
                return new Tables(tables);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        private static long[] longs(Map<String, long[]> t, String name, int n) {
            long[] v = t.get(name);
            if (v == null || v.length != n) {
                throw new IllegalStateException("iquant-grids.bin: table " + name + " missing or not " + n + " entries");
            }
            return v;
        }

        private static int[] ints(Map<String, long[]> t, String name, int n) {
            long[] v = longs(t, name, n);
            int[] out = new int[n];
            for (int i = 0; i < n; i++) {
                out[i] = (int) v[i];
            }
            return out;
        }
    }
}
