package dev.lazarus.gateway.api;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.lazarus.gateway.routing.ModelRoute;
import dev.lazarus.gateway.routing.RouteTable;
import dev.lazarus.gateway.routing.Router;
import java.time.Instant;
import java.util.List;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/** {@code GET /v1/models} and {@code GET /v1/models/{id}}: the public model names, not the backends. */
@RestController
public class ModelsController {

    /** One entry of the model list, as OpenAI shapes it. */
    public record ModelEntry(String id, String object, long created, @JsonProperty("owned_by") String ownedBy) {}

    public record ModelList(String object, List<ModelEntry> data) {}

    private final RouteTable routes;
    // Routes are fixed at start; "created" is when this gateway began serving them.
    private final long created = Instant.now().getEpochSecond();

    public ModelsController(RouteTable routes) {
        this.routes = routes;
    }

    @GetMapping("/v1/models")
    public ModelList models() {
        return new ModelList("list", routes.routes().stream().map(this::entry).toList());
    }

    /** {@code {*id}} so that names with a slash ({@code org/model}) work as with OpenAI's own ids. */
    @GetMapping("/v1/models/{*id}")
    public ModelEntry model(@PathVariable String id) {
        String name = id.startsWith("/") ? id.substring(1) : id;
        return routes.find(name).map(this::entry).orElseThrow(() -> Router.modelNotFound(name));
    }

    private ModelEntry entry(ModelRoute route) {
        return new ModelEntry(route.name(), "model", created, route.ownedBy());
    }
}
