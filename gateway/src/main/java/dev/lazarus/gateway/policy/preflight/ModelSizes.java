package dev.lazarus.gateway.policy.preflight;

import dev.lazarus.backend.api.InferenceBackend;
import dev.lazarus.backend.api.ModelInfo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * A backend's model size when the configuration does not give it: a byte count its model
 * metadata carries, else the size of the local file its metadata names ({@code model_path}, as
 * llama-server reports it).
 */
public final class ModelSizes {

    /** Metadata keys that carry a size in bytes, in the order they are tried. */
    static final List<String> SIZE_KEYS = List.of("size_bytes", "model_bytes", "size");

    private ModelSizes() {}

    public static OptionalLong fromMetadata(InferenceBackend backend) {
        long total = 0;
        for (ModelInfo model : backend.describe().models()) {
            OptionalLong size = sizeOf(model.metadata());
            if (size.isEmpty()) {
                return OptionalLong.empty();
            }
            total += size.getAsLong();
        }
        return total > 0 ? OptionalLong.of(total) : OptionalLong.empty();
    }

    static OptionalLong sizeOf(Map<String, Object> metadata) {
        for (String key : SIZE_KEYS) {
            if (metadata.get(key) instanceof Number n && n.longValue() > 0) {
                return OptionalLong.of(n.longValue());
            }
        }
        if (metadata.get("model_path") instanceof String path) {
            try {
                Path file = Path.of(path);
                if (Files.isRegularFile(file)) {
                    return OptionalLong.of(Files.size(file));
                }
            } catch (IOException | RuntimeException e) {
                return OptionalLong.empty();
            }
        }
        return OptionalLong.empty();
    }
}
