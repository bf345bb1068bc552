package dev.lazarus.backend.api;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The bytes of a local model file, for a backend's {@link ModelInfo#SIZE_BYTES}. A split GGUF
 * ({@code name-00001-of-00003.gguf}, as {@code llama-gguf-split} writes it) counts all its parts:
 * the memory wall must see the whole model, not its first shard.
 */
public final class ModelFiles {

    private static final Pattern SPLIT = Pattern.compile("(.*)-(\\d{5})-of-(\\d{5})\\.gguf");

    private ModelFiles() {}

    /** The files of the model at {@code path}: every part of a split GGUF in order, else just the file. */
    public static List<Path> parts(Path path) {
        Matcher m = SPLIT.matcher(path.getFileName().toString());
        if (!m.matches()) {
            return List.of(path);
        }
        int count = Integer.parseInt(m.group(3));
        List<Path> parts = new ArrayList<>(count);
        for (int i = 1; i <= count; i++) {
            parts.add(path.resolveSibling("%s-%05d-of-%05d.gguf".formatted(m.group(1), i, count)));
        }
        return parts;
    }

    /** The bytes of all parts; empty when one of them is missing or unreadable (the size would be a guess). */
    public static OptionalLong sizeOf(Path path) {
        long total = 0;
        for (Path part : parts(path)) {
            if (!Files.isRegularFile(part)) {
                return OptionalLong.empty();
            }
            try {
                total += Files.size(part);
            } catch (IOException e) {
                return OptionalLong.empty();
            }
        }
        return total > 0 ? OptionalLong.of(total) : OptionalLong.empty();
    }
}
