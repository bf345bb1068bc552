package dev.lazarus.kt.gguf;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An open GGUF model: metadata, tensor infos and the memory-mapped tensor data. Opening maps the
 * files (no copy, so hundreds of GB open instantly) and parses only the headers. A split model
 * ({@code name-00001-of-00003.gguf}) opens as one: any part may be named, all parts are mapped, the
 * metadata comes from the first and each tensor points at the part that holds it.
 *
 * <p>Segments returned by {@link #data} are valid until {@link #close()}; they are shared, read-only
 * and may be used from any thread. They are plain native segments over the mapping (the class of an
 * {@link Arena} allocation), not mapped ones: see the note on {@code map}.
 */
public final class GgufFile implements AutoCloseable {

    private static final Pattern SPLIT = Pattern.compile("(.*)-(\\d{5})-of-(\\d{5})\\.gguf");

    private final Path path;
    private final Arena arena;
    private final int version;
    private final Map<String, Object> metadata;
    private final List<GgufTensorInfo> tensors;
    private final Map<String, GgufTensorInfo> byName;
    private final List<Path> files;
    private final List<MemorySegment> mappings;
    private final long[] dataOffsets;

    private GgufFile(Path path, Arena arena, int version, Map<String, Object> metadata, List<GgufTensorInfo> tensors,
                     List<Path> files, List<MemorySegment> mappings, long[] dataOffsets) {
        this.path = path;
        this.arena = arena;
        this.version = version;
        this.metadata = metadata;
        this.tensors = tensors;
        this.files = files;
        this.mappings = mappings;
        this.dataOffsets = dataOffsets;
        Map<String, GgufTensorInfo> index = new LinkedHashMap<>();
        for (GgufTensorInfo t : tensors) {
            if (index.put(t.name(), t) != null) {
                throw new GgufException(files.get(t.fileIndex()) + ": tensor '" + t.name() + "' appears twice");
            }
        }
        this.byName = index;
    }

    /**
     * Opens and maps a GGUF file, with all parts when it is one part of a split model.
     *
     * @throws GgufException when a file is missing, unreadable, truncated, corrupt or of an unsupported version
     */
    public static GgufFile open(Path path) {
        List<Path> parts = splitParts(path);
        Arena arena = Arena.ofShared();
        try {
            List<MemorySegment> maps = new ArrayList<>(parts.size());
            List<GgufTensorInfo> tensors = new ArrayList<>();
            long[] dataOffsets = new long[parts.size()];
            GgufHeaderReader.Header first = null;
            for (int i = 0; i < parts.size(); i++) {
                MemorySegment map = map(parts.get(i), arena);
                GgufHeaderReader.Header h = GgufHeaderReader.read(map, parts.get(i), i);
                if (first == null) {
                    first = h;
                }
                maps.add(map);
                dataOffsets[i] = h.dataOffset();
                tensors.addAll(h.tensors());
            }
            checkSplitCount(parts, first.metadata());
            return new GgufFile(parts.getFirst(), arena, first.version(), first.metadata(),
                    Collections.unmodifiableList(tensors), List.copyOf(parts), List.copyOf(maps), dataOffsets);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /**
     * Maps {@code file} into {@code arena} and returns the mapping as a plain native segment of the same scope:
     * closing the arena still unmaps it, and an access after that still fails with an IllegalStateException.
     *
     * <p>Why not the mapped segment itself: C2 compiles a kernel's segment accesses for the segment classes it has
     * met, and a kernel that meets both {@code MappedMemorySegmentImpl} (the file) and the native segments of the RAM
     * tier's copies runs its accesses through a polymorphic path, 25-50 % slower for either (Q8_0 with four
     * activations 4.8 → 3.6 GB/s in a harness; Q8_0 prefill with RAM-tier experts fell to a third in the engine).
     * One class for all weights keeps every kernel monomorphic. Nothing here uses what a mapped segment adds
     * ({@code load}, {@code force}, {@code isLoaded}).
     */
    private static MemorySegment map(Path file, Arena arena) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            MemorySegment mapped = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena);
            return MemorySegment.ofAddress(mapped.address()).reinterpret(mapped.byteSize(), arena, null).asReadOnly();
        } catch (NoSuchFileException e) {
            throw new GgufException(file + ": no such file", e);
        } catch (IOException e) {
            throw new GgufException(file + ": cannot map: " + e.getMessage(), e);
        }
    }

    /** The parts of a split model in order, or just {@code path}. */
    private static List<Path> splitParts(Path path) {
        Matcher m = SPLIT.matcher(path.getFileName().toString());
        if (!m.matches()) {
            return List.of(path);
        }
        int count = Integer.parseInt(m.group(3));
        if (count < 1 || Integer.parseInt(m.group(2)) > count) {
            throw new GgufException(path + ": split file name says part " + m.group(2) + " of " + m.group(3));
        }
        List<Path> parts = new ArrayList<>(count);
        for (int i = 1; i <= count; i++) {
            Path part = path.resolveSibling("%s-%05d-of-%05d.gguf".formatted(m.group(1), i, count));
            if (!Files.isRegularFile(part)) {
                throw new GgufException(path + ": split part " + i + " of " + count + " is missing: " + part);
            }
            parts.add(part);
        }
        return parts;
    }

    private static void checkSplitCount(List<Path> parts, Map<String, Object> md) {
        if (md.get("split.count") instanceof Number n && n.intValue() != parts.size()) {
            throw new GgufException(parts.getFirst() + ": key 'split.count' says " + n + " parts but "
                    + parts.size() + " were found by name");
        }
    }

    public int version() {
        return version;
    }

    /** The path of the (first) file. */
    public Path path() {
        return path;
    }

    /** All files of the model, the first being {@link #path()}. */
    public List<Path> files() {
        return files;
    }

    /**
     * The metadata in file order. Values are String, Integer (u8, i8, u16, i16, i32), Long (u32, u64, i64),
     * Float, Double, Boolean, or an unmodifiable List of those for arrays.
     */
    public Map<String, Object> metadata() {
        return metadata;
    }

    public String string(String key) {
        return typed(key, String.class, "string");
    }

    public String string(String key, String def) {
        return metadata.containsKey(key) ? string(key) : def;
    }

    /** An integer value of any width (u8 … i64). */
    public long integer(String key) {
        Object v = metadata.get(key);
        if (v instanceof Integer || v instanceof Long) {
            return ((Number) v).longValue();
        }
        throw wrong(key, v, "integer");
    }

    public long integer(String key, long def) {
        return metadata.containsKey(key) ? integer(key) : def;
    }

    /** A floating point value; integer values are accepted too (some converters write them). */
    public float real(String key, float def) {
        Object v = metadata.get(key);
        if (v == null) {
            return def;
        }
        if (v instanceof Number n) {
            return n.floatValue();
        }
        throw wrong(key, v, "number");
    }

    public boolean bool(String key, boolean def) {
        return metadata.containsKey(key) ? typed(key, Boolean.class, "bool") : def;
    }

    @SuppressWarnings("unchecked")
    public List<Object> array(String key) {
        return typed(key, List.class, "array");
    }

    /** {@code general.architecture}. */
    public String architecture() {
        return string("general.architecture");
    }

    public List<GgufTensorInfo> tensors() {
        return tensors;
    }

    public Optional<GgufTensorInfo> findTensor(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    public GgufTensorInfo tensor(String name) {
        GgufTensorInfo t = byName.get(name);
        if (t == null) {
            throw new GgufException(path + ": tensor '" + name + "' not found");
        }
        return t;
    }

    /** The tensor's bytes: a read-only slice of the mapping, valid until {@link #close()}. */
    public MemorySegment data(GgufTensorInfo t) {
        return mappings.get(t.fileIndex()).asSlice(dataOffsets[t.fileIndex()] + t.offset(), t.byteSize()).asReadOnly();
    }

    /** Unmaps the files; segments obtained from {@link #data} become invalid. */
    @Override
    public void close() {
        arena.close();
    }

    private <T> T typed(String key, Class<T> type, String typeName) {
        Object v = metadata.get(key);
        if (type.isInstance(v)) {
            return type.cast(v);
        }
        throw wrong(key, v, typeName);
    }

    private GgufException wrong(String key, Object v, String expected) {
        if (v == null) {
            return new GgufException(path + ": key '" + key + "' is missing (expected " + expected + ")");
        }
        return new GgufException(path + ": key '" + key + "' is " + v.getClass().getSimpleName() + ", expected " + expected);
    }
}
