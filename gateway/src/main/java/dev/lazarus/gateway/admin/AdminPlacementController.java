package dev.lazarus.gateway.admin;

import dev.lazarus.backend.api.ExpertPlacementView;
import dev.lazarus.backend.api.ExpertPlacementView.PlacementSnapshot;
import dev.lazarus.backend.api.InferenceBackend;
import dev.lazarus.gateway.api.ApiError;
import dev.lazarus.gateway.policy.Actor;
import dev.lazarus.gateway.policy.PolicyEngine;
import dev.lazarus.gateway.policy.UnknownBackendException;
import dev.lazarus.gateway.routing.BackendRegistry;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.tags.Tag;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Where a mixture-of-experts backend keeps its experts (GPU, RAM, memory-mapped), with hit rates per
 * tier, and the operator's lever to re-place them now. Backends that do not place experts answer
 * 409 {@code placement_unsupported}.
 */
@RestController
@Tag(name = "backends")
class AdminPlacementController {

    private final BackendRegistry backends;
    private final PolicyEngine engine;

    AdminPlacementController(BackendRegistry backends, PolicyEngine engine) {
        this.backends = backends;
        this.engine = engine;
    }

    @GetMapping("/admin/backends/{id}/placement")
    @Operation(summary = "The expert placement map: tiers with budgets, bytes and hit rates, per-layer tiers and activation counts")
    Mono<PlacementSnapshot> placement(@PathVariable String id) {
        return call(id, ExpertPlacementView::expertPlacement);
    }

    @PostMapping("/admin/backends/{id}/placement/rebalance")
    @Operation(summary = "Re-place experts now from the routing statistics (copies weights between tiers; requests keep being served)")
    Mono<PlacementSnapshot> rebalance(@PathVariable String id) {
        return call(id, ExpertPlacementView::rebalanceExperts).doOnNext(after -> {
            Map<String, Object> figures = new LinkedHashMap<>();
            after.tiers().forEach(t -> figures.put(t.tier() + "_experts", t.experts()));
            engine.note(id, Actor.OPERATOR, "rebalance-experts", "experts re-placed by operator", figures);
        });
    }

    /** Runs {@code op} off the event loop: placement calls may block while weights are copied. */
    private Mono<PlacementSnapshot> call(String id, Function<ExpertPlacementView, Optional<PlacementSnapshot>> op) {
        return Mono.fromCallable(() -> {
            InferenceBackend backend = backends.find(id).orElseThrow(() -> new UnknownBackendException(id));
            if (!(backend instanceof ExpertPlacementView view)) {
                throw new ApiError(HttpStatus.CONFLICT, "invalid_request_error", "placement_unsupported", "id",
                        "backend '" + id + "' does not place experts across tiers");
            }
            return op.apply(view).orElseThrow(() -> new ApiError(HttpStatus.CONFLICT, "invalid_request_error",
                    "placement_unavailable", "id",
                    "backend '" + id + "' has no expert placement yet (still loading, or a dense model)"));
        }).subscribeOn(Schedulers.boundedElastic());
    }
}
