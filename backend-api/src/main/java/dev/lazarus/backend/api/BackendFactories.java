package dev.lazarus.backend.api;

import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;

/** The factories found on the class path, by kind. */
public final class BackendFactories {

    private final Map<String, BackendFactory> byKind;

    private BackendFactories(Map<String, BackendFactory> byKind) {
        this.byKind = byKind;
    }

    public static BackendFactories load(ClassLoader loader) {
        Map<String, BackendFactory> byKind = new TreeMap<>();
        for (BackendFactory factory : ServiceLoader.load(BackendFactory.class, loader)) {
            BackendFactory previous = byKind.putIfAbsent(factory.kind(), factory);
            if (previous != null && previous.getClass() != factory.getClass()) {
                throw new IllegalStateException("two backend factories claim kind '" + factory.kind() + "': "
                        + previous.getClass().getName() + " and " + factory.getClass().getName());
            }
        }
        return new BackendFactories(byKind);
    }

    public static BackendFactories load() {
        return load(Thread.currentThread().getContextClassLoader());
    }

    public java.util.Set<String> kinds() {
        return byKind.keySet();
    }

    /** Creates a backend of the configured kind, or fails naming the kinds that exist. */
    public InferenceBackend create(BackendConfig config) {
        BackendFactory factory = byKind.get(config.kind());
        if (factory == null) {
            throw new BackendConfigException(config.id(), "kind",
                    "unknown backend kind '" + config.kind() + "' (known: " + String.join(", ", byKind.keySet()) + ")");
        }
        return factory.create(config);
    }
}
