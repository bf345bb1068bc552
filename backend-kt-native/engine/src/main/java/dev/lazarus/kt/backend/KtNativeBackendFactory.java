package dev.lazarus.kt.backend;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendFactory;
import dev.lazarus.backend.api.InferenceBackend;

/** Kind {@code kt-native}: the in-JVM engine. Found by {@link java.util.ServiceLoader}. */
public final class KtNativeBackendFactory implements BackendFactory {

    public static final String KIND = "kt-native";

    @Override
    public String kind() {
        return KIND;
    }

    @Override
    public InferenceBackend create(BackendConfig config) {
        return new KtNativeBackend(config.id(), KtNativeSettings.from(config));
    }
}
