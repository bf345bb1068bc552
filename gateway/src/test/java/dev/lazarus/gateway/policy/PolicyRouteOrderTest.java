package dev.lazarus.gateway.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendCapabilities;
import dev.lazarus.backend.api.BackendDescriptor;
import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.backend.api.InferenceBackend;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.CompletionRequest;
import dev.lazarus.gateway.routing.ModelRoute;
import dev.lazarus.gateway.routing.RouteTarget;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** Request-time order: promoted candidates, then the oracle and fallbacks; out-of-service ones skipped. */
class PolicyRouteOrderTest {

    private final PolicyStore store = PolicyStore.inMemory();
    private final PolicyEngine engine;
    private final ModelRoute route;

    PolicyRouteOrderTest() {
        Map<String, Role> roles = new LinkedHashMap<>();
        roles.put("llama", Role.ORACLE);
        roles.put("kt", Role.CANDIDATE);
        roles.put("sglang", Role.CANDIDATE);
        roles.put("llama2", Role.ORACLE);
        engine = new PolicyEngine(store, roles, PreflightCheck.alwaysPasses(), Clock.systemUTC());
        engine.start();
        route = new ModelRoute("m", List.of(target("llama"), target("kt"), target("sglang"), target("llama2")),
                "lazarus", Duration.ofMinutes(1));
    }

    @AfterEach
    void close() {
        store.close();
    }

    @Test
    void candidatesThatAreNotPromotedGetNoTraffic() {
        assertThat(order()).containsExactly("llama", "llama2");
    }

    @Test
    void promotedCandidatesComeFirstInConfiguredOrderThenTheOracles() {
        engine.promote("sglang", Actor.OPERATOR, null, Map.of());
        engine.promote("kt", Actor.OPERATOR, null, Map.of());
        assertThat(order()).containsExactly("kt", "sglang", "llama", "llama2");
    }

    @Test
    void rolledBackDisabledAndDrainingBackendsAreSkipped() {
        engine.promote("kt", Actor.OPERATOR, null, Map.of());
        engine.promote("sglang", Actor.OPERATOR, null, Map.of());
        engine.rollback("kt", Actor.POLICY, "oom", Map.of());
        engine.drain("sglang", Actor.OPERATOR, true);
        engine.disable("llama", Actor.OPERATOR, null);
        assertThat(order()).containsExactly("llama2");
    }

    @Test
    void backendsThePolicyDoesNotKnowKeepTheirPlace() {
        ModelRoute other = new ModelRoute("x", List.of(target("external"), target("llama")), "lazarus",
                Duration.ofMinutes(1));
        assertThat(new PolicyRouteOrder(engine).order(other, other.targets())).extracting(RouteTarget::backendId)
                .containsExactly("external", "llama");
    }

    private List<String> order() {
        return new PolicyRouteOrder(engine).order(route, route.targets()).stream().map(RouteTarget::backendId).toList();
    }

    private static RouteTarget target(String id) {
        return new RouteTarget(new NamedBackend(id), "m");
    }

    /** Only its id matters to ordering. */
    private record NamedBackend(String id) implements InferenceBackend {
        @Override
        public BackendDescriptor describe() {
            return new BackendDescriptor(id, "none", List.of(), new BackendCapabilities(true, false, false, false, true));
        }

        @Override
        public Mono<BackendHealth> health() {
            return Mono.just(BackendHealth.up());
        }

        @Override
        public Flux<ChatCompletionChunk> chat(ChatCompletionRequest request) {
            return Flux.empty();
        }

        @Override
        public Flux<Completion> completion(CompletionRequest request) {
            return Flux.empty();
        }

        @Override
        public void close() {
        }
    }
}
