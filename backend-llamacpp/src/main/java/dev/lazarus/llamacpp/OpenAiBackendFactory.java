package dev.lazarus.llamacpp;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendFactory;
import dev.lazarus.backend.api.InferenceBackend;

/**
 * Kind {@code openai}: any OpenAI-compatible server (vLLM, SGLang, KTransformers' server, a hosted
 * API with its key). The llama.cpp backend's HTTP client with the defaults such servers need: kept
 * stream connections, no assistant prefill unless configured, health from {@code /v1/models}.
 */
public final class OpenAiBackendFactory implements BackendFactory {

    @Override
    public String kind() {
        return LlamaCppSettings.OPENAI;
    }

    @Override
    public InferenceBackend create(BackendConfig config) {
        return new LlamaCppBackend(config);
    }
}
