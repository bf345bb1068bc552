package dev.lazarus.gateway.config;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Checks what bean validation cannot: that ids and names are unique and that every route names
 * configured backends. Runs before any backend is created, so that a typo fails in milliseconds
 * instead of after loading a model.
 */
final class RouteConfigValidator {

    private RouteConfigValidator() {}

    static void validate(LazarusProperties properties) {
        List<String> problems = new ArrayList<>();
        Set<String> backendIds = new HashSet<>();
        for (LazarusProperties.Backend backend : properties.backends()) {
            if (!backendIds.add(backend.id())) {
                problems.add("backend id '" + backend.id() + "' is configured twice");
            }
        }
        Set<String> modelNames = new HashSet<>();
        for (LazarusProperties.Model model : properties.models()) {
            if (!modelNames.add(model.name())) {
                problems.add("model '" + model.name() + "' is configured twice");
            }
            for (String id : model.backends()) {
                if (!backendIds.contains(id)) {
                    problems.add("model '" + model.name() + "' routes to unknown backend '" + id
                            + "' (configured backends: " + String.join(", ", backendIds.stream().sorted().toList())
                            + ")");
                }
            }
            if (new HashSet<>(model.backends()).size() != model.backends().size()) {
                problems.add("model '" + model.name() + "' lists a backend twice: " + model.backends());
            }
        }
        if (!problems.isEmpty()) {
            throw new GatewayConfigException("invalid lazarus configuration: " + String.join("; ", problems));
        }
    }
}
