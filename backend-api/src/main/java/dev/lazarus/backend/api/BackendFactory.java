package dev.lazarus.backend.api;

/**
 * Creates backends of one kind. Implementations are registered for {@link java.util.ServiceLoader}
 * in {@code META-INF/services/dev.lazarus.backend.api.BackendFactory} and must have a public
 * no-argument constructor.
 */
public interface BackendFactory {

    /** The kind name used in configuration, e.g. {@code llamacpp} or {@code kt-native}. */
    String kind();

    /**
     * Builds a backend from its configuration. Invalid settings are reported as
     * {@link BackendConfigException} naming the setting; slow work (loading weights, starting a
     * process) should run in the background and show in {@link InferenceBackend#health()}.
     */
    InferenceBackend create(BackendConfig config);
}
