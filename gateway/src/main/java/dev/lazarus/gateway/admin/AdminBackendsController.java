package dev.lazarus.gateway.admin;

import dev.lazarus.gateway.policy.Actor;
import dev.lazarus.gateway.policy.Breakers;
import dev.lazarus.gateway.policy.PolicyEngine;
import dev.lazarus.gateway.policy.UnknownBackendException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.tags.Tag;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/** Backends: their policy state, breaker, health and live figures, and the operator's levers. */
@RestController
@Tag(name = "backends")
class AdminBackendsController {

    /** {@code {"object":"list","data":[...]}}, like OpenAI's lists. */
    record BackendList(String object, List<BackendView> data) {}

    private final PolicyEngine engine;
    private final Breakers breakers;
    private final BackendViews views;
    private final AdminRequests requests;

    AdminBackendsController(PolicyEngine engine, Breakers breakers, BackendViews views, AdminRequests requests) {
        this.engine = engine;
        this.breakers = breakers;
        this.views = views;
        this.requests = requests;
    }

    @GetMapping("/admin/backends")
    @Operation(summary = "Every backend: role, state and reason, breaker, health, live figures, models")
    Mono<BackendList> list() {
        return views.all().map(all -> new BackendList("list", all));
    }

    @GetMapping("/admin/backends/{id}")
    @Operation(summary = "One backend")
    Mono<BackendView> get(@PathVariable String id) {
        return views.view(id);
    }

    @PostMapping("/admin/backends/{id}/promote")
    @Operation(summary = "CANDIDATE → PROMOTED: primary for its models, the oracle behind it (409 otherwise)")
    Mono<BackendView> promote(@PathVariable String id, @RequestBody(required = false) String body) {
        String reason = reason(body);
        return act(id, () -> engine.promote(id, Actor.OPERATOR, reason, Map.of()));
    }

    @PostMapping("/admin/backends/{id}/rollback")
    @Operation(summary = "PROMOTED → ROLLED_BACK: traffic to the oracle at once; stays so until enabled (409 otherwise)")
    Mono<BackendView> rollback(@PathVariable String id, @RequestBody(required = false) String body) {
        String reason = reason(body);
        return act(id, () -> engine.rollback(id, Actor.OPERATOR, reason, Map.of()));
    }

    @PostMapping("/admin/backends/{id}/enable")
    @Operation(summary = "Candidate DISABLED/ROLLED_BACK → CANDIDATE after preflight (409 preflight_failed); "
            + "oracle DISABLED → ACTIVE")
    Mono<BackendView> enable(@PathVariable String id, @RequestBody(required = false) String body) {
        String reason = reason(body);
        return act(id, () -> engine.enable(id, Actor.OPERATOR, reason));
    }

    @PostMapping("/admin/backends/{id}/disable")
    @Operation(summary = "Any state → DISABLED: no traffic")
    Mono<BackendView> disable(@PathVariable String id, @RequestBody(required = false) String body) {
        String reason = reason(body);
        return act(id, () -> engine.disable(id, Actor.OPERATOR, reason));
    }

    @PostMapping("/admin/backends/{id}/drain")
    @Operation(summary = "Finish in-flight requests, take no new ones")
    Mono<BackendView> drain(@PathVariable String id, @RequestBody(required = false) String body) {
        String reason = reason(body);
        return act(id, () -> engine.drain(id, Actor.OPERATOR, true, reason));
    }

    @PostMapping("/admin/backends/{id}/undrain")
    @Operation(summary = "Take new requests again")
    Mono<BackendView> undrain(@PathVariable String id, @RequestBody(required = false) String body) {
        String reason = reason(body);
        return act(id, () -> engine.drain(id, Actor.OPERATOR, false, reason));
    }

    @PostMapping("/admin/backends/{id}/breaker/open")
    @Operation(summary = "Force the circuit breaker open (no calls) until closed or reset")
    Mono<BackendView> openBreaker(@PathVariable String id) {
        return breaker(id, "open", CircuitBreaker::transitionToForcedOpenState);
    }

    @PostMapping("/admin/backends/{id}/breaker/close")
    @Operation(summary = "Close the circuit breaker")
    Mono<BackendView> closeBreaker(@PathVariable String id) {
        return breaker(id, "close", CircuitBreaker::transitionToClosedState);
    }

    @PostMapping("/admin/backends/{id}/breaker/reset")
    @Operation(summary = "Reset the circuit breaker: closed, counters cleared")
    Mono<BackendView> resetBreaker(@PathVariable String id) {
        return breaker(id, "reset", CircuitBreaker::reset);
    }

    private Mono<BackendView> act(String id, Runnable change) {
        return Mono.fromRunnable(change).then(Mono.defer(() -> views.view(id)));
    }

    private Mono<BackendView> breaker(String id, String op, Consumer<CircuitBreaker> change) {
        return Mono.fromRunnable(() -> {
            String before = engine.state(id).map(s -> breakers.find(id).map(b -> b.getState().name()).orElse("NONE"))
                    .orElseThrow(() -> new UnknownBackendException(id));
            CircuitBreaker breaker = breakers.get(id);
            change.accept(breaker);
            engine.note(id, Actor.OPERATOR, "breaker-" + op, "circuit breaker " + op + " by operator",
                    Map.of("breaker_from", before, "breaker_to", breaker.getState().name()));
        }).then(Mono.defer(() -> views.view(id)));
    }

    private String reason(String body) {
        return requests.reason(body);
    }
}
