package dev.lazarus.gateway.policy.preflight;

import dev.lazarus.backend.api.InferenceBackend;
import dev.lazarus.backend.api.ModelFiles;
import dev.lazarus.backend.api.ModelInfo;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * A backend's model size when the configuration does not give it: the byte count its model
 * metadata carries ({@link ModelInfo#SIZE_BYTES}, which kt-native reports from its GGUF files),
 * else the size of the local file its metadata names ({@code model_path}, as llama-server reports
 * it), all parts of a split GGUF counted.
 */
public final class ModelSizes {

    /** Metadata keys that carry a size in bytes, in the order they are tried. */
    static final List<String> SIZE_KEYS = List.of(ModelInfo.SIZE_BYTES, "model_bytes", "size");

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

    /**
     * What the backend's KV caches may grow to: per model, its {@code kv_bytes_per_token} (of the cache types it was
     * configured with, as kt-native reports them) times its context times {@code max_sequences} (1 if not given);
     * empty when a model does not report them (a llamacpp backend).
     */
    public static OptionalLong kvCacheFromMetadata(InferenceBackend backend) {
        long total = 0;
        for (ModelInfo model : backend.describe().models()) {
            OptionalLong kv = kvCacheOf(model);
            if (kv.isEmpty()) {
                return OptionalLong.empty();
            }
            total += kv.getAsLong();
        }
        return total > 0 ? OptionalLong.of(total) : OptionalLong.empty();
    }

    static OptionalLong kvCacheOf(ModelInfo model) {
        Map<String, Object> meta = model.metadata() == null ? Map.of() : model.metadata();
        if (!(meta.get("kv_bytes_per_token") instanceof Number perToken) || perToken.longValue() <= 0
                || model.contextLength() <= 0) {
            return OptionalLong.empty();
        }
        long sequences = meta.get("max_sequences") instanceof Number n && n.longValue() > 0 ? n.longValue() : 1;
        return OptionalLong.of(Math.multiplyExact(Math.multiplyExact(perToken.longValue(),
                (long) model.contextLength()), sequences));
    }

    static OptionalLong sizeOf(Map<String, Object> metadata) {
        for (String key : SIZE_KEYS) {
            if (metadata.get(key) instanceof Number n && n.longValue() > 0) {
                return OptionalLong.of(n.longValue());
            }
        }
        if (metadata.get("model_path") instanceof String path) {
            try {
                return ModelFiles.sizeOf(Path.of(path));
            } catch (InvalidPathException e) {
                return OptionalLong.empty();
            }
        }
        return OptionalLong.empty();
    }
}
