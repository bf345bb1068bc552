package dev.lazarus.llamacpp;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendFactory;
import dev.lazarus.backend.api.InferenceBackend;

/** Kind {@code llamacpp}: a llama-server, reached by URL or started by the backend. */
public final class LlamaCppBackendFactory implements BackendFactory {

    @Override
    public String kind() {
        return LlamaCppSettings.LLAMACPP;
    }

    @Override
    public InferenceBackend create(BackendConfig config) {
        return new LlamaCppBackend(config);
    }
}
