package dev.lazarus.gateway.testing;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendFactory;
import dev.lazarus.backend.api.InferenceBackend;

/** Test-only backend kind {@code scripted}; see {@link ScriptedBackend}. */
public final class ScriptedBackendFactory implements BackendFactory {

    @Override
    public String kind() {
        return "scripted";
    }

    @Override
    public InferenceBackend create(BackendConfig config) {
        return new ScriptedBackend(config);
    }
}
