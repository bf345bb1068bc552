package dev.lazarus.backend.api;

import java.util.List;

/** What a backend is and serves: its kind, its models and what it can do. */
public record BackendDescriptor(String id, String kind, List<ModelInfo> models, BackendCapabilities capabilities) {

    public BackendDescriptor {
        models = models == null ? List.of() : List.copyOf(models);
    }
}
