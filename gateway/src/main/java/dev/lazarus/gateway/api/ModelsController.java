package dev.lazarus.gateway.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import dev.lazarus.backend.api.BackendCapabilities;
import dev.lazarus.backend.api.ModelInfo;
import dev.lazarus.backend.api.Redactor;
import dev.lazarus.gateway.routing.ApiEndpoint;
import dev.lazarus.gateway.routing.ModelRoute;
import dev.lazarus.gateway.routing.RouteTable;
import dev.lazarus.gateway.routing.RouteTarget;
import dev.lazarus.gateway.routing.Router;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /v1/models} and {@code GET /v1/models/{id}}: the public model names, not the backends.
 * Each entry also carries {@code meta}, what the serving backends report about the model
 * (architecture, quantisation, context length, random weights); OpenAI clients ignore the field.
 * Keys that name a place on a server (a model file's path, a directory, an upstream URL) are never
 * shown: the metadata comes from backends written for operators, the list is read by API clients.
 * The values shown pass the gateway's {@link Redactor}: an upstream's self-description
 * ({@code build_info}) is its own text, and may quote what it was sent.
 */
@RestController
public class ModelsController {

    private static final Logger log = LoggerFactory.getLogger(ModelsController.class);
    private static final String RANDOM_WEIGHTS = "random_weights";
    /** {@code path}, {@code model_path}, {@code cache-dir}, {@code baseUrl}, ... but not {@code profile}. */
    private static final Pattern LOCATION_KEY = Pattern.compile(
            "(?:(?i)(?:.*[_.-])?(?:path|file|dir|directory|url|uri|host)s?)|(?:.*[a-z](?:Path|File|Dir|Directory|Url|Uri|Host)s?)");

    /**
     * One entry of the model list, as OpenAI shapes it, plus {@code meta} when a backend says anything and
     * {@code endpoints}: the paths (each endpoint's canonical one) at which some backend of the route serves it.
     */
    public record ModelEntry(String id, String object, long created, @JsonProperty("owned_by") String ownedBy,
                             @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, Object> meta,
                             List<String> endpoints) {}

    public record ModelList(String object, List<ModelEntry> data) {}

    private final RouteTable routes;
    private final Redactor redactor;
    // Routes are fixed at start; "created" is when this gateway began serving them.
    private final long created = Instant.now().getEpochSecond();

    public ModelsController(RouteTable routes, Redactor redactor) {
        this.routes = routes;
        this.redactor = redactor;
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
        return new ModelEntry(route.name(), "model", created, route.ownedBy(), redactor.redactValues(meta(route)),
                endpoints(route));
    }

    private List<String> endpoints(ModelRoute route) {
        List<BackendCapabilities> capabilities = new ArrayList<>();
        for (RouteTarget target : route.targets()) {
            try {
                capabilities.add(target.backend().describe().capabilities());
            } catch (RuntimeException e) {
                log.warn("backend '{}' could not describe itself: {}", target.backendId(), redactor.redact(e.toString()));
            }
        }
        return Arrays.stream(ApiEndpoint.values())
                .filter(endpoint -> capabilities.stream().anyMatch(endpoint::servedBy))
                .map(endpoint -> endpoint.paths().getFirst())
                .toList();
    }

    /**
     * The facts of the first backend in the route that describes the model (the primary), with its
     * serving {@code context_length}. {@code random_weights} is set when ANY backend of the route
     * serves random weights: a fallback may be the one that answers, and a client must not take
     * such output for a real model's.
     */
    private Map<String, Object> meta(ModelRoute route) {
        Map<String, Object> meta = new TreeMap<>(); // sorted: the same order on every call
        boolean primaryFound = false;
        boolean random = false;
        for (RouteTarget target : route.targets()) {
            Optional<ModelInfo> info = describedModel(target);
            if (info.isEmpty()) {
                continue;
            }
            if (!primaryFound) {
                primaryFound = true;
                info.get().metadata().forEach((key, value) -> {
                    if (!isLocation(key)) {
                        meta.put(key, value);
                    }
                });
                if (info.get().contextLength() > 0) {
                    meta.put("context_length", info.get().contextLength());
                }
            }
            random |= Boolean.TRUE.equals(info.get().metadata().get(RANDOM_WEIGHTS));
        }
        if (random) {
            meta.put(RANDOM_WEIGHTS, true);
        }
        return meta;
    }

    static boolean isLocation(String metadataKey) {
        return LOCATION_KEY.matcher(metadataKey).matches();
    }

    /** The backend's entry for the model it is called with, or its only model (a name it does not map). */
    private Optional<ModelInfo> describedModel(RouteTarget target) {
        List<ModelInfo> models;
        try {
            models = target.backend().describe().models();
        } catch (RuntimeException e) {
            // the list of names must not fail because one backend cannot describe itself now
            log.warn("backend '{}' could not describe its models: {}", target.backendId(), redactor.redact(e.toString()));
            return Optional.empty();
        }
        return models.stream().filter(m -> target.backendModel().equals(m.id())).findFirst()
                .or(() -> models.size() == 1 ? Optional.of(models.getFirst()) : Optional.empty());
    }
}
