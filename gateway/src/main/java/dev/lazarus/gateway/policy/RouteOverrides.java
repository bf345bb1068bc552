package dev.lazarus.gateway.policy;

import dev.lazarus.gateway.routing.BackendRegistry;
import dev.lazarus.gateway.routing.ModelRoute;
import dev.lazarus.gateway.routing.RouteTarget;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;

/**
 * Fallback chains an operator changed at run time ({@code PUT /admin/routes/{model}}), kept in the
 * policy store so that they outlive a restart. A chain replaces the configured one for its model;
 * the model name each backend is called with comes from the backend's configuration.
 */
public final class RouteOverrides {

    private final PolicyStore store;
    private final BackendRegistry backends;
    private final BiFunction<String, String, String> backendModel;
    private final Clock clock;
    private final Map<String, List<String>> chains;

    /**
     * @param backendModel (backend id, public model) → the model name sent to that backend
     */
    public RouteOverrides(PolicyStore store, BackendRegistry backends, BiFunction<String, String, String> backendModel,
            Clock clock) {
        this.store = store;
        this.backends = backends;
        this.backendModel = backendModel;
        this.clock = clock;
        this.chains = new ConcurrentHashMap<>();
        refresh();
    }

    /**
     * Reads the stored chains (at start, and after another replica changed one). A chain stored by an
     * earlier configuration may name a backend that is gone: it is left out.
     */
    public synchronized void refresh() {
        Map<String, List<String>> stored = new java.util.LinkedHashMap<>(store.routeOverrides());
        stored.values().removeIf(chain -> chain.stream().anyMatch(id -> backends.find(id).isEmpty()));
        chains.putAll(stored);
        chains.keySet().retainAll(stored.keySet());
    }

    /** The operator's chain for the model, if any. */
    public Optional<List<String>> chain(String model) {
        return Optional.ofNullable(chains.get(model));
    }

    /** The targets to start planning from: the override when there is one, else the configured chain. */
    public List<RouteTarget> targets(ModelRoute route) {
        List<String> chain = chains.get(route.name());
        if (chain == null) {
            return route.targets();
        }
        return chain.stream()
                .map(id -> route.targets().stream().filter(t -> t.backendId().equals(id)).findFirst()
                        .orElseGet(() -> new RouteTarget(backends.find(id).orElseThrow(),
                                backendModel.apply(id, route.name()))))
                .toList();
    }

    /** Replaces the model's chain (the caller has validated the ids), journalled as an operator action. */
    public synchronized AuditEvent set(String model, List<String> chain, List<String> configured) {
        List<String> copy = List.copyOf(chain);
        boolean reset = copy.equals(configured);
        AuditEvent event = store.recordRoute(model, reset ? null : copy, new AuditEvent(0, clock.instant(), null,
                Actor.OPERATOR, "route", null, null, (reset ? "reset fallback chain of '" : "fallback chain of '")
                + model + "' set to " + copy, Map.of("model", model, "backends", copy)));
        if (reset) {
            chains.remove(model);
        } else {
            chains.put(model, copy);
        }
        return event;
    }
}
