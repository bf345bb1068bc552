package dev.lazarus.kt.testsupport;

import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.gguf.GgufTensorInfo;
import dev.lazarus.kt.gguf.GgufValueType;
import dev.lazarus.kt.gguf.GgufWriter;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** Copies of GGUF files with extra tensors: shapes the synthetic generators do not write. */
public final class GgufCopies {

    private GgufCopies() {}

    /**
     * {@code source} written to {@code target} with tensor {@code copyName}'s bytes added once more as {@code newName}
     * (metadata values keep their Java types: integers are written as 32 or 64-bit signed, which every reader takes).
     */
    public static Path withCopiedTensor(Path source, Path target, String copyName, String newName) {
        try (GgufFile file = GgufFile.open(source)) {
            GgufWriter w = new GgufWriter();
            for (Map.Entry<String, Object> e : file.metadata().entrySet()) {
                put(w, e.getKey(), e.getValue());
            }
            for (GgufTensorInfo t : file.tensors()) {
                w.addTensor(t.name(), t.type(), t.shape(), file.data(t).toArray(ValueLayout.JAVA_BYTE));
            }
            GgufTensorInfo copied = file.tensor(copyName);
            w.addTensor(newName, copied.type(), copied.shape(), file.data(copied).toArray(ValueLayout.JAVA_BYTE));
            w.write(target);
        }
        return target;
    }

    private static void put(GgufWriter w, String key, Object v) {
        switch (v) {
            case String s -> w.putString(key, s);
            case Integer i -> w.putI32(key, i);
            case Long l -> w.putI64(key, l);
            case Float f -> w.putF32(key, f);
            case Double d -> w.putF64(key, d);
            case Boolean b -> w.putBool(key, b);
            case List<?> list -> w.putArray(key, elementType(key, list), list);
            default -> throw new IllegalArgumentException(key + ": " + v.getClass());
        }
    }

    private static GgufValueType elementType(String key, List<?> list) {
        Object first = list.isEmpty() ? "" : list.getFirst();
        return switch (first) {
            case String s -> GgufValueType.STRING;
            case Integer i -> GgufValueType.INT32;
            case Long l -> GgufValueType.INT64;
            case Float f -> GgufValueType.FLOAT32;
            case Boolean b -> GgufValueType.BOOL;
            default -> throw new IllegalArgumentException(key + ": array of " + first.getClass());
        };
    }
}
