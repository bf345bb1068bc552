package dev.lazarus.backend.api;

import java.util.Map;

/**
 * A model a backend serves. {@code contextLength} is 0 when unknown. {@code metadata} holds
 * facts worth showing in {@code /v1/models} (architecture, quantisation, "random weights").
 */
public record ModelInfo(String id, String ownedBy, int contextLength, Map<String, Object> metadata) {

    public ModelInfo {
        metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
    }

    public static ModelInfo of(String id, String ownedBy) {
        return new ModelInfo(id, ownedBy, 0, Map.of());
    }
}
