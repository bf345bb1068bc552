package dev.lazarus.gateway.routing;

import dev.lazarus.backend.api.InferenceBackend;
import java.util.Objects;

/**
 * One step of a fallback chain: a backend and the model name it is called with.
 *
 * @param backend      the backend
 * @param backendModel the model name sent to it; the public name unless the backend maps it
 */
public record RouteTarget(InferenceBackend backend, String backendModel) {

    public RouteTarget {
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(backendModel, "backendModel");
    }

    public String backendId() {
        return backend.id();
    }
}
