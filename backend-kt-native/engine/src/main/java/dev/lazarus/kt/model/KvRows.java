package dev.lazarus.kt.model;

import dev.lazarus.kt.matrix.RowDot;
import dev.lazarus.kt.tensor.GgmlOrders;
import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.tensor.CpuFromFloat;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * One block's keys or values in a KV cache: position-major rows of {@link #width} values of one
 * {@link KvCacheType}. F16 rows are held as their 16 bits, 2 bytes a value as in llama.cpp (the attention loops
 * widen them as they read, {@link F16Lanes}); every other type as ggml's bytes, {@link #rowBytes} a row, read in place
 * by the type's kernels. Grows on demand
 * ({@link #grow}); not thread-safe, as {@link KvCache}.
 */
final class KvRows {

    private final KvCacheType type;
    /** ggml's vec_dot of this type over these rows, in the model's ggml orders; made once, not per attended head. */
    private final RowDot dot;
    private final int width;
    private final long rowBytes;
    private short[] halves;
    private byte[] bytes;
    private MemorySegment segment;

    KvRows(KvCacheType type, int width, int capacity, GgmlOrders orders) {
        if (width % type.ggmlType().blockSize() != 0) {
            throw new IllegalArgumentException("a KV cache row of " + width + " values is not a multiple of the "
                    + type.settingName() + " block size " + type.ggmlType().blockSize());
        }
        this.type = type;
        this.dot = RowDot.of(type.ggmlType(), orders);
        this.width = width;
        this.rowBytes = type.bytesFor(width);
        grow(capacity);
    }

    KvCacheType type() {
        return type;
    }

    RowDot dot() {
        return dot;
    }

    int width() {
        return width;
    }

    long rowBytes() {
        return rowBytes;
    }

    /** F16 rows as their bits; null for other types. */
    short[] halves() {
        return halves;
    }

    /** Other types' rows as ggml's bytes; null for F16. */
    MemorySegment segment() {
        return segment;
    }

    /** The byte offset of value {@code column} of position {@code position}'s row (column a block start). */
    long byteOffset(int position, int column) {
        return position * rowBytes + type.bytesFor(column);
    }

    void grow(int capacity) {
        if (type == KvCacheType.F16) {
            halves = halves == null ? new short[width * capacity] : Arrays.copyOf(halves, width * capacity);
        } else {
            int size = Math.toIntExact(rowBytes * capacity);
            bytes = bytes == null ? new byte[size] : Arrays.copyOf(bytes, size);
            segment = MemorySegment.ofArray(bytes);
        }
    }

    /** Stores one position's row from {@code src[off..off+width)}, converted as ggml's set_rows converts it. */
    void store(int position, float[] src, int off) {
        if (halves != null) {
            for (int i = 0; i < width; i++) {
                halves[position * width + i] = Float.floatToFloat16(src[off + i]);
            }
        } else {
            CpuFromFloat.write(type.ggmlType(), src, off, width, segment, position * rowBytes);
        }
    }

    /** Values {@code [column, column+count)} of position {@code position} as floats (ggml's to_float), into dst. */
    void read(int position, int column, int count, float[] dst, int dstOff) {
        if (halves != null) {
            for (int i = 0; i < count; i++) {
                dst[dstOff + i] = Float.float16ToFloat(halves[position * width + column + i]);
            }
        } else {
            GgmlCodec.decode(type.ggmlType(), segment, byteOffset(position, column), dst, dstOff, count);
        }
    }

    /** Copies the first {@code positions} rows of {@code source} (same type and width). */
    void copyFrom(KvRows source, int positions) {
        if (halves != null) {
            System.arraycopy(source.halves, 0, halves, 0, positions * width);
        } else {
            System.arraycopy(source.bytes, 0, bytes, 0, Math.toIntExact(positions * rowBytes));
        }
    }

    /** Bytes held now. */
    long bytes() {
        return halves != null ? 2L * halves.length : bytes.length;
    }
}
