package dev.lazarus.gateway.admin;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.lazarus.gateway.api.ApiError;
import dev.lazarus.gateway.policy.RouteOverrides;
import dev.lazarus.gateway.routing.Router;
import dev.lazarus.gateway.routing.BackendRegistry;
import dev.lazarus.gateway.routing.Endpoint;
import dev.lazarus.gateway.routing.ModelRoute;
import dev.lazarus.gateway.routing.RoutePlanner;
import dev.lazarus.gateway.routing.RouteFilter;
import dev.lazarus.gateway.routing.RouteTable;
import dev.lazarus.gateway.routing.RouteTarget;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.tags.Tag;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;

/** Fallback chains per public model, and changing one at run time. */
@RestController
@Tag(name = "routes")
class AdminRoutesController {

    /**
     * @param model      public model name
     * @param backends   the chain in effect (the operator's, else the configured one)
     * @param configured the chain from the configuration
     * @param overridden whether an operator's chain is in effect
     * @param plan       the order a chat request would be tried in now (policy states, breakers and health applied)
     */
    record RouteView(String model, List<String> backends, List<String> configured, boolean overridden,
                     @JsonProperty("plan") List<String> plan) {}

    record RouteList(String object, List<RouteView> data) {}

    private final RouteTable routes;
    private final RouteOverrides overrides;
    private final RoutePlanner planner;
    private final List<RouteFilter> filters;
    private final BackendRegistry backends;
    private final AdminRequests requests;

    AdminRoutesController(RouteTable routes, RouteOverrides overrides, RoutePlanner planner,
            org.springframework.beans.factory.ObjectProvider<RouteFilter> filters, BackendRegistry backends,
            AdminRequests requests) {
        this.routes = routes;
        this.overrides = overrides;
        this.planner = planner;
        this.filters = RouteFilter.inOrder(filters.stream().toList());
        this.backends = backends;
        this.requests = requests;
    }

    @GetMapping("/admin/routes")
    @Operation(summary = "Every model's fallback chain and the order a request would take now")
    RouteList list() {
        return new RouteList("list", routes.routes().stream().map(this::view).toList());
    }

    /** Body {@code {"backends": ["id", ...]}}: known ids, no repeats, at least one. Model names may contain '/'. */
    @PutMapping("/admin/routes/{*model}")
    @Operation(summary = "Replace a model's fallback chain at run time (kept across restarts); "
            + "the configured chain again removes the override")
    RouteView put(@PathVariable String model, @RequestBody(required = false) String body) {
        String name = model.startsWith("/") ? model.substring(1) : model;
        ModelRoute route = routes.find(name).orElseThrow(() -> new ApiError(HttpStatus.NOT_FOUND,
                "invalid_request_error", "model_not_found", "model", "The model '" + Router.echo(name) + "' does not exist."));
        JsonNode chain = requests.object(body).get("backends");
        if (chain == null || !chain.isArray() || chain.isEmpty()) {
            throw ApiError.invalidRequest("'backends' must be a non-empty array of backend ids.", "backends");
        }
        List<String> ids = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < chain.size(); i++) {
            JsonNode item = chain.get(i);
            String param = "backends[" + i + "]";
            if (!item.isString()) {
                throw ApiError.invalidRequest("Backend ids are strings.", param);
            }
            String id = item.asString();
            if (backends.find(id).isEmpty()) {
                throw ApiError.invalidValue("There is no backend '" + id + "'.", param);
            }
            if (!seen.add(id)) {
                throw ApiError.invalidValue("Backend '" + id + "' is listed twice.", param);
            }
            ids.add(id);
        }
        overrides.set(name, ids, configured(route));
        return view(route);
    }

    private RouteView view(ModelRoute route) {
        List<String> effective = overrides.targets(route).stream().map(RouteTarget::backendId).toList();
        return new RouteView(route.name(), effective, configured(route), overrides.chain(route.name()).isPresent(),
                plan(route));
    }

    /** What the router would try for a chat request now: the planner, then the breaker and health filters. */
    private List<String> plan(ModelRoute route) {
        List<RouteTarget> planned = planner.plan(route, Endpoint.CHAT);
        for (RouteFilter filter : filters) {
            planned = filter.filter(route, Endpoint.CHAT, planned);
        }
        return planned.stream().map(RouteTarget::backendId).toList();
    }

    private static List<String> configured(ModelRoute route) {
        return route.targets().stream().map(RouteTarget::backendId).toList();
    }
}
