package dev.lazarus.backend.api;

import java.util.Map;
import java.util.OptionalLong;

/**
 * A model a backend serves. {@code contextLength} is 0 when unknown. {@code metadata} holds
 * facts worth showing in {@code /v1/models} (architecture, quantisation, "random weights"), and
 * {@link #SIZE_BYTES} when the backend knows its weights' size: the gateway's preflight checks
 * that against the memory budget, so a backend with local weights should say it (see
 * {@link ModelFiles}), already while it loads.
 */
public record ModelInfo(String id, String ownedBy, int contextLength, Map<String, Object> metadata) {

    /** Metadata key: the weights' size in bytes (a {@link Number}), all files of the model counted. */
    public static final String SIZE_BYTES = "size_bytes";

    /**
     * Metadata key: what the backend cannot do with this model, by name (a non-empty {@link String}, e.g.
     * "unsupported tensor types: TQ1_0 (blk.*.ffn_down_exps.weight, 24 tensors)"); the gateway's preflight keeps a
     * candidate that reports it DISABLED with that reason.
     */
    public static final String UNSUPPORTED = "unsupported";

    /** Metadata key: what the model file needs (a {@link Map}: architecture, tensor types...), for the admin view. */
    public static final String NEEDS = "needs";

    public ModelInfo {
        metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
    }

    /** {@link #SIZE_BYTES}, when the backend gave it. */
    public OptionalLong sizeBytes() {
        return metadata.get(SIZE_BYTES) instanceof Number n && n.longValue() > 0
                ? OptionalLong.of(n.longValue()) : OptionalLong.empty();
    }

    /** {@link #UNSUPPORTED}, when the backend reported it. */
    public java.util.Optional<String> unsupported() {
        return metadata.get(UNSUPPORTED) instanceof String s && !s.isBlank() ? java.util.Optional.of(s)
                : java.util.Optional.empty();
    }

    public static ModelInfo of(String id, String ownedBy) {
        return new ModelInfo(id, ownedBy, 0, Map.of());
    }
}
