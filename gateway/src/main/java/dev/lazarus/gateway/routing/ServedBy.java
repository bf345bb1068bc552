package dev.lazarus.gateway.routing;

import java.util.List;
import java.util.StringJoiner;
import java.util.concurrent.CopyOnWriteArrayList;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * Which backends answered one request, in order: the one that served it, then each one a
 * mid-stream failure resumed it on. The attempt loop adds a backend when its first chunk goes
 * downstream; the API layer reads it for the response's {@code model} and its header. One per
 * request, carried in the Reactor context under this class.
 */
public final class ServedBy {

    /**
     * @param backendId the backend's id
     * @param model     the model it served: its configured model name, else the one it reports
     */
    public record Backend(String backendId, String model) {}

    // Written on the backend's thread, read on the writer's: a resume may switch threads.
    private final List<Backend> backends = new CopyOnWriteArrayList<>();

    /** {@code context} carrying this record: the API layer puts it around the router's answer. */
    public Context into(Context context) {
        return context.put(ServedBy.class, this);
    }

    /** The record the API layer put in {@code context}, or null. */
    static ServedBy in(ContextView context) {
        return context.getOrDefault(ServedBy.class, null);
    }

    void add(Backend backend) {
        backends.add(backend);
    }

    public List<Backend> backends() {
        return List.copyOf(backends);
    }

    public boolean isEmpty() {
        return backends.isEmpty();
    }

    /** The model of the backend answering now, or {@code fallback} before any answered. */
    public String currentModel(String fallback) {
        return backends.isEmpty() ? fallback : backends.getLast().model();
    }

    /** The backend ids, comma-separated, for a header; empty when none answered. */
    public String ids() {
        StringJoiner ids = new StringJoiner(", ");
        for (Backend backend : backends) {
            ids.add(backend.backendId());
        }
        return ids.toString();
    }
}
