package dev.lazarus.kt.gguf;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes GGUF v3 files that llama.cpp loads. Metadata and tensors are collected first (tensors given
 * as f32 are kept as given and encoded one at a time while writing, so a model is never held twice in
 * memory), then {@link #write} streams header and data to disk. Alignment is 32 unless
 * {@code general.alignment} is put.
 */
public final class GgufWriter {

    private record Value(GgufValueType type, GgufValueType elementType, Object value) {
    }

    private record Tensor(String name, GgmlType type, long[] shape, byte[] bytes, float[] values) {
        long byteSize() {
            return bytes != null ? bytes.length : type.bytesFor(values.length);
        }
    }

    private final Map<String, Value> metadata = new LinkedHashMap<>();
    private final Map<String, Tensor> tensors = new LinkedHashMap<>();

    public GgufWriter() {
    }

    public GgufWriter putString(String key, String value) {
        return put(key, GgufValueType.STRING, value);
    }

    public GgufWriter putU8(String key, int value) {
        return put(key, GgufValueType.UINT8, checkRange(key, value, 0, 255));
    }

    public GgufWriter putI8(String key, int value) {
        return put(key, GgufValueType.INT8, checkRange(key, value, Byte.MIN_VALUE, Byte.MAX_VALUE));
    }

    public GgufWriter putU16(String key, int value) {
        return put(key, GgufValueType.UINT16, checkRange(key, value, 0, 65535));
    }

    public GgufWriter putI16(String key, int value) {
        return put(key, GgufValueType.INT16, checkRange(key, value, Short.MIN_VALUE, Short.MAX_VALUE));
    }

    /** An unsigned 32-bit value; negative ints are taken as their unsigned bit pattern. */
    public GgufWriter putU32(String key, int value) {
        return put(key, GgufValueType.UINT32, Integer.toUnsignedLong(value));
    }

    public GgufWriter putI32(String key, int value) {
        return put(key, GgufValueType.INT32, value);
    }

    public GgufWriter putU64(String key, long value) {
        return put(key, GgufValueType.UINT64, value);
    }

    public GgufWriter putI64(String key, long value) {
        return put(key, GgufValueType.INT64, value);
    }

    public GgufWriter putF32(String key, float value) {
        return put(key, GgufValueType.FLOAT32, value);
    }

    public GgufWriter putF64(String key, double value) {
        return put(key, GgufValueType.FLOAT64, value);
    }

    public GgufWriter putBool(String key, boolean value) {
        return put(key, GgufValueType.BOOL, value);
    }

    /** An array of scalars or strings; numbers are narrowed to {@code elementType} (range-checked). */
    public GgufWriter putArray(String key, GgufValueType elementType, List<?> values) {
        if (elementType == GgufValueType.ARRAY) {
            throw new IllegalArgumentException("key '" + key + "': nested arrays are not supported");
        }
        for (Object v : values) {
            checkElement(key, elementType, v);
        }
        metadata.put(key, new Value(GgufValueType.ARRAY, elementType, List.copyOf(values)));
        return this;
    }

    /** A tensor whose bytes are already in {@code type}'s block layout. */
    public GgufWriter addTensor(String name, GgmlType type, long[] shape, byte[] data) {
        long expected = type.bytesFor(elements(name, shape));
        if (data.length != expected) {
            throw new IllegalArgumentException("tensor '%s' %s%s needs %d bytes, got %d"
                    .formatted(name, type, Arrays.toString(shape), expected, data.length));
        }
        return add(new Tensor(name, type, shape.clone(), data, null));
    }

    /** A tensor given as f32, converted or quantized to {@code type} while writing. */
    public GgufWriter addTensor(String name, float[] values, long[] shape, GgmlType type) {
        long n = elements(name, shape);
        if (n != values.length) {
            throw new IllegalArgumentException("tensor '%s' has shape %s (%d elements) but %d values"
                    .formatted(name, Arrays.toString(shape), n, values.length));
        }
        if (!type.encodable()) {
            throw new IllegalArgumentException("tensor '" + name + "': cannot encode type " + type);
        }
        if (shape[0] % type.blockSize() != 0) {
            throw new IllegalArgumentException("tensor '%s': row length %d is not a multiple of the %s block size %d"
                    .formatted(name, shape[0], type, type.blockSize()));
        }
        return add(new Tensor(name, type, shape.clone(), null, values));
    }

    /** Writes the file (replacing any existing one). */
    public void write(Path path) {
        int alignment = alignment();
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(path), 1 << 20)) {
            Sink sink = new Sink(out);
            sink.u32(GgufHeaderReader.MAGIC);
            sink.u32(3);
            sink.u64(tensors.size());
            sink.u64(metadata.size());
            for (Map.Entry<String, Value> e : metadata.entrySet()) {
                sink.string(e.getKey());
                sink.u32(e.getValue().type().id());
                if (e.getValue().type() == GgufValueType.ARRAY) {
                    List<?> list = (List<?>) e.getValue().value();
                    sink.u32(e.getValue().elementType().id());
                    sink.u64(list.size());
                    for (Object v : list) {
                        sink.value(e.getValue().elementType(), v);
                    }
                } else {
                    sink.value(e.getValue().type(), e.getValue().value());
                }
            }
            long offset = 0;
            for (Tensor t : tensors.values()) {
                sink.string(t.name());
                sink.u32(t.shape().length);
                for (long d : t.shape()) {
                    sink.u64(d);
                }
                sink.u32(t.type().id());
                sink.u64(offset);
                offset = GgufHeaderReader.align(offset + t.byteSize(), alignment);
            }
            sink.pad(alignment);
            for (Tensor t : tensors.values()) {
                sink.bytes(t.bytes() != null ? t.bytes() : encode(t));
                sink.pad(alignment);
            }
        } catch (IOException e) {
            throw new GgufException(path + ": cannot write: " + e.getMessage(), e);
        }
    }

    private static byte[] encode(Tensor t) {
        byte[] out = new byte[Math.toIntExact(t.byteSize())];
        GgmlCodec.encode(t.type(), t.values(), 0, t.values().length, MemorySegment.ofArray(out), 0);
        return out;
    }

    private int alignment() {
        Value v = metadata.get(GgufHeaderReader.ALIGNMENT_KEY);
        if (v == null) {
            return GgufHeaderReader.DEFAULT_ALIGNMENT;
        }
        long a = v.value() instanceof Number n ? n.longValue() : -1;
        if (v.type() != GgufValueType.UINT32 || a <= 0 || Long.bitCount(a) != 1) {
            throw new GgufException("key '" + GgufHeaderReader.ALIGNMENT_KEY + "' must be a power-of-two u32, is " + v.value());
        }
        return (int) a;
    }

    private GgufWriter put(String key, GgufValueType type, Object value) {
        metadata.put(key, new Value(type, null, value));
        return this;
    }

    private GgufWriter add(Tensor t) {
        if (tensors.putIfAbsent(t.name(), t) != null) {
            throw new IllegalArgumentException("tensor '" + t.name() + "' added twice");
        }
        return this;
    }

    private static long elements(String name, long[] shape) {
        if (shape.length < 1 || shape.length > 4 || Arrays.stream(shape).anyMatch(d -> d <= 0)) {
            throw new IllegalArgumentException("tensor '" + name + "': bad shape " + Arrays.toString(shape));
        }
        return Arrays.stream(shape).reduce(1, Math::multiplyExact);
    }

    private static int checkRange(String key, long v, long lo, long hi) {
        if (v < lo || v > hi) {
            throw new IllegalArgumentException("key '%s': %d is outside [%d, %d]".formatted(key, v, lo, hi));
        }
        return (int) v;
    }

    private static void checkElement(String key, GgufValueType type, Object v) {
        boolean ok = switch (type) {
            case STRING -> v instanceof String;
            case BOOL -> v instanceof Boolean;
            case FLOAT32, FLOAT64 -> v instanceof Number;
            case UINT8 -> v instanceof Number n && n.longValue() >= 0 && n.longValue() <= 255;
            case INT8 -> v instanceof Number n && n.longValue() >= Byte.MIN_VALUE && n.longValue() <= Byte.MAX_VALUE;
            case UINT16 -> v instanceof Number n && n.longValue() >= 0 && n.longValue() <= 65535;
            case INT16 -> v instanceof Number n && n.longValue() >= Short.MIN_VALUE && n.longValue() <= Short.MAX_VALUE;
            case UINT32 -> v instanceof Number n && n.longValue() >= 0 && n.longValue() <= 0xffffffffL;
            case INT32 -> v instanceof Number n && n.longValue() >= Integer.MIN_VALUE && n.longValue() <= Integer.MAX_VALUE;
            case UINT64, INT64 -> v instanceof Integer || v instanceof Long;
            case ARRAY -> false;
        };
        if (!ok) {
            throw new IllegalArgumentException("key '" + key + "': array element " + v + " is not a valid " + type);
        }
    }

    /** Little-endian primitive output with position tracking for padding. */
    private static final class Sink {
        private final OutputStream out;
        private final ByteBuffer buf = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        private long position;

        Sink(OutputStream out) {
            this.out = out;
        }

        void value(GgufValueType type, Object v) throws IOException {
            switch (type) {
                case UINT8, INT8 -> bytes(new byte[] {((Number) v).byteValue()});
                case UINT16, INT16 -> fixed(buf.clear().putShort(((Number) v).shortValue()));
                case UINT32, INT32 -> u32(((Number) v).intValue());
                case UINT64, INT64 -> u64(((Number) v).longValue());
                case FLOAT32 -> fixed(buf.clear().putFloat(((Number) v).floatValue()));
                case FLOAT64 -> fixed(buf.clear().putDouble(((Number) v).doubleValue()));
                case BOOL -> bytes(new byte[] {(byte) ((Boolean) v ? 1 : 0)});
                case STRING -> string((String) v);
                case ARRAY -> throw new IllegalStateException("nested array");
            }
        }

        void u32(int v) throws IOException {
            fixed(buf.clear().putInt(v));
        }

        void u64(long v) throws IOException {
            fixed(buf.clear().putLong(v));
        }

        void string(String s) throws IOException {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            u64(b.length);
            bytes(b);
        }

        void pad(int alignment) throws IOException {
            long padded = GgufHeaderReader.align(position, alignment);
            bytes(new byte[(int) (padded - position)]);
        }

        void bytes(byte[] b) throws IOException {
            out.write(b);
            position += b.length;
        }

        private void fixed(ByteBuffer b) throws IOException {
            out.write(b.array(), 0, b.position());
            position += b.position();
        }
    }
}
