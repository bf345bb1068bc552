package dev.lazarus.gateway.routing;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.InferenceBackend;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The running backends by id; owns them and closes them on shutdown. */
public final class BackendRegistry implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(BackendRegistry.class);

    private final Map<String, InferenceBackend> byId;

    private BackendRegistry(Map<String, InferenceBackend> byId) {
        this.byId = byId;
    }

    /**
     * Creates every backend in order. When one fails, those already created are closed before the
     * failure is rethrown, so that a bad configuration leaves no process or mapping behind.
     */
    public static BackendRegistry create(List<BackendConfig> configs, Function<BackendConfig, InferenceBackend> factory) {
        Map<String, InferenceBackend> created = new LinkedHashMap<>();
        try {
            for (BackendConfig config : configs) {
                InferenceBackend backend = factory.apply(config);
                created.put(config.id(), backend);
                log.info("backend '{}' created ({})", backend.id(), backend.describe().kind());
            }
        } catch (RuntimeException e) {
            closeAll(created.values());
            throw e;
        }
        return new BackendRegistry(java.util.Collections.unmodifiableMap(created));
    }

    public Optional<InferenceBackend> find(String id) {
        return Optional.ofNullable(byId.get(id));
    }

    public Collection<InferenceBackend> all() {
        return byId.values();
    }

    @Override
    public void close() {
        closeAll(byId.values());
    }

    private static void closeAll(Collection<InferenceBackend> backends) {
        List<InferenceBackend> reversed = new ArrayList<>(backends);
        java.util.Collections.reverse(reversed);
        for (InferenceBackend backend : reversed) {
            try {
                backend.close();
            } catch (RuntimeException e) {
                log.warn("closing backend '{}' failed: {}", backend.id(), e.toString());
            }
        }
    }
}
