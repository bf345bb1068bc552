package dev.lazarus.gateway.routing;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Public model name → route, in configuration order. Immutable; built once at start. */
public final class RouteTable {

    private final Map<String, ModelRoute> byName;
    private final List<ModelRoute> ordered;

    public RouteTable(List<ModelRoute> routes) {
        Map<String, ModelRoute> map = new LinkedHashMap<>();
        for (ModelRoute route : routes) {
            if (map.putIfAbsent(route.name(), route) != null) {
                throw new IllegalArgumentException("model '" + route.name() + "' is configured twice");
            }
        }
        this.byName = Map.copyOf(map);
        this.ordered = List.copyOf(map.values());
    }

    public Optional<ModelRoute> find(String model) {
        return model == null ? Optional.empty() : Optional.ofNullable(byName.get(model));
    }

    /** All routes in configuration order. */
    public List<ModelRoute> routes() {
        return ordered;
    }
}
