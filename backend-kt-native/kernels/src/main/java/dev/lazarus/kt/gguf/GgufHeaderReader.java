package dev.lazarus.kt.gguf;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Parses the header of one GGUF file (metadata and tensor infos) straight from its mapping. Every
 * read is bounds-checked so that a truncated or corrupt file fails with a message naming the file
 * and what was being read, never with an IndexOutOfBoundsException.
 */
final class GgufHeaderReader {

    static final int MAGIC = 0x46554747; // "GGUF" read little-endian
    static final int DEFAULT_ALIGNMENT = 32;
    static final String ALIGNMENT_KEY = "general.alignment";
    private static final int MAX_DIMS = 4; // GGML_MAX_DIMS

    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** A parsed header: the data section starts at {@code dataOffset} of the file. */
    record Header(int version, Map<String, Object> metadata, List<GgufTensorInfo> tensors, long dataOffset, int alignment) {
    }

    private final MemorySegment seg;
    private final Path file;
    private final int fileIndex;
    private long pos;
    /** What is being read, for error messages ("key 'x'", "tensor 'y'"). */
    private String context = "header";

    private GgufHeaderReader(MemorySegment seg, Path file, int fileIndex) {
        this.seg = seg;
        this.file = file;
        this.fileIndex = fileIndex;
    }

    static Header read(MemorySegment seg, Path file, int fileIndex) {
        return new GgufHeaderReader(seg, file, fileIndex).header();
    }

    private Header header() {
        need(4);
        int magic = seg.get(U32, pos);
        if (magic != MAGIC) {
            throw fail("not a GGUF file: magic is 0x%08x, expected 0x%08x (\"GGUF\")".formatted(magic, MAGIC));
        }
        pos += 4;
        int version = u32();
        if (version != 2 && version != 3) {
            String hint = Integer.reverseBytes(version) == 2 || Integer.reverseBytes(version) == 3
                    ? " (a big-endian GGUF, which is not supported)" : version == 1 ? " (GGUF v1 is obsolete)" : "";
            throw fail("unsupported GGUF version " + version + hint + "; versions 2 and 3 are supported");
        }
        long tensorCount = count("tensor count");
        long kvCount = count("metadata count");

        Map<String, Object> metadata = new LinkedHashMap<>();
        for (long i = 0; i < kvCount; i++) {
            context = "metadata entry " + i;
            String key = string();
            context = "key '" + key + "'";
            int typeId = u32();
            GgufValueType type = GgufValueType.byIdOrNull(typeId);
            if (type == null) {
                throw fail("unknown metadata value type id " + typeId);
            }
            if (metadata.put(key, value(type)) != null) {
                throw fail("duplicate metadata key");
            }
        }

        int alignment = DEFAULT_ALIGNMENT;
        if (metadata.get(ALIGNMENT_KEY) instanceof Number n) {
            long a = n.longValue();
            if (a <= 0 || Long.bitCount(a) != 1 || a > 1 << 30) {
                context = "key '" + ALIGNMENT_KEY + "'";
                throw fail("alignment " + a + " is not a power of two");
            }
            alignment = (int) a;
        }

        List<GgufTensorInfo> tensors = new ArrayList<>((int) Math.min(tensorCount, 1 << 16));
        for (long i = 0; i < tensorCount; i++) {
            context = "tensor info " + i;
            tensors.add(tensorInfo(alignment));
        }
        long dataOffset = align(pos, alignment);
        context = "data section";
        for (GgufTensorInfo t : tensors) {
            long end = dataOffset + t.offset() + t.byteSize();
            if (end > seg.byteSize() || end < 0) {
                throw new GgufException("%s: tensor '%s' (%s %s) needs bytes up to %d but the file has %d (truncated?)"
                        .formatted(file, t.name(), t.type(), Arrays.toString(t.shape()), end, seg.byteSize()));
            }
        }
        return new Header(version, Collections.unmodifiableMap(metadata), List.copyOf(tensors), dataOffset, alignment);
    }

    private GgufTensorInfo tensorInfo(int alignment) {
        String name = string();
        context = "tensor '" + name + "'";
        int nDims = u32();
        if (nDims < 1 || nDims > MAX_DIMS) {
            throw fail("has " + nDims + " dimensions; ggml allows 1 to " + MAX_DIMS);
        }
        long[] shape = new long[nDims];
        for (int d = 0; d < nDims; d++) {
            shape[d] = u64();
            if (shape[d] <= 0) {
                throw fail("has dimension " + d + " of size " + Long.toUnsignedString(shape[d]));
            }
        }
        int typeId = u32();
        GgmlType type;
        try {
            type = GgmlType.byId(typeId);
        } catch (IllegalArgumentException e) {
            throw fail("has unknown or unsupported ggml type id " + typeId);
        }
        if (shape[0] % type.blockSize() != 0) {
            throw fail("of type %s has row length %d, not a multiple of its block size %d"
                    .formatted(type, shape[0], type.blockSize()));
        }
        long offset = u64();
        if (offset < 0 || offset % alignment != 0) {
            throw fail("has data offset " + Long.toUnsignedString(offset) + ", not a multiple of the alignment " + alignment);
        }
        try {
            GgufTensorInfo info = new GgufTensorInfo(name, type, shape, offset, fileIndex);
            info.byteSize(); // overflow check
            return info;
        } catch (ArithmeticException e) {
            throw fail("has an element count that overflows: " + Arrays.toString(shape));
        }
    }

    private Object value(GgufValueType type) {
        return switch (type) {
            case UINT8 -> { need(1); yield Byte.toUnsignedInt(seg.get(ValueLayout.JAVA_BYTE, pos++)); }
            case INT8 -> { need(1); yield (int) seg.get(ValueLayout.JAVA_BYTE, pos++); }
            case UINT16 -> Short.toUnsignedInt(u16());
            case INT16 -> (int) u16();
            case UINT32 -> Integer.toUnsignedLong(u32());
            case INT32 -> u32();
            case FLOAT32 -> { need(4); float f = seg.get(F32, pos); pos += 4; yield f; }
            case BOOL -> { need(1); yield seg.get(ValueLayout.JAVA_BYTE, pos++) != 0; }
            case STRING -> string();
            case UINT64, INT64 -> u64();
            case FLOAT64 -> { need(8); double d = seg.get(F64, pos); pos += 8; yield d; }
            case ARRAY -> array();
        };
    }

    private List<Object> array() {
        int typeId = u32();
        GgufValueType type = GgufValueType.byIdOrNull(typeId);
        if (type == null) {
            throw fail("array has unknown element type id " + typeId);
        }
        long n = count("array length");
        if (type.size() > 0) {
            need(n * type.size()); // fail before allocating a huge list for a corrupt length
        }
        List<Object> values = new ArrayList<>((int) n);
        for (long i = 0; i < n; i++) {
            values.add(value(type));
        }
        return Collections.unmodifiableList(values);
    }

    private String string() {
        long len = u64();
        if (len < 0 || len > Integer.MAX_VALUE) {
            throw fail("string length " + Long.toUnsignedString(len) + " is impossible (corrupt file)");
        }
        need(len);
        byte[] bytes = seg.asSlice(pos, len).toArray(ValueLayout.JAVA_BYTE);
        pos += len;
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** A u64 count that must also be plausible: each counted item takes at least one byte. */
    private long count(String what) {
        long n = u64();
        if (n < 0 || n > seg.byteSize() - pos) {
            throw fail(what + " " + Long.toUnsignedString(n) + " exceeds the remaining file size (corrupt or truncated)");
        }
        return n;
    }

    private short u16() {
        need(2);
        short v = seg.get(U16, pos);
        pos += 2;
        return v;
    }

    private int u32() {
        need(4);
        int v = seg.get(U32, pos);
        pos += 4;
        return v;
    }

    private long u64() {
        need(8);
        long v = seg.get(U64, pos);
        pos += 8;
        return v;
    }

    private void need(long bytes) {
        if (bytes < 0 || pos + bytes > seg.byteSize()) {
            throw fail("truncated: needs %d bytes at offset %d but the file has %d".formatted(bytes, pos, seg.byteSize()));
        }
    }

    private GgufException fail(String message) {
        return new GgufException(file + ": " + context + ": " + message);
    }

    static long align(long offset, int alignment) {
        return (offset + alignment - 1) / alignment * alignment;
    }
}
