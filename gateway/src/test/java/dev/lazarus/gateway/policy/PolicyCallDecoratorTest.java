package dev.lazarus.gateway.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.gateway.routing.Attempt;
import dev.lazarus.gateway.routing.Endpoint;
import dev.lazarus.gateway.routing.RouteTarget;
import dev.lazarus.gateway.testing.ScriptedBackendFactory;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

/**
 * What the policy sees of a backend call: it is in flight from its subscription until it ends, fails or is
 * cancelled, and its error reaches the fatal-error rule on a worker thread before it travels on.
 */
class PolicyCallDecoratorTest {

    private final List<String> seen = new CopyOnWriteArrayList<>();
    private final PolicyCallDecorator decorator = new PolicyCallDecorator(
            (id, error) -> seen.add(id + ": " + error.getMessage() + " on " + Thread.currentThread().getName()));
    private final RouteTarget target = new RouteTarget(
            new ScriptedBackendFactory().create(new BackendConfig("b", "scripted", Map.of())), "m");

    private Flux<ChatCompletionChunk> decorated(Flux<ChatCompletionChunk> call) {
        return decorator.decorate(new Attempt<>("m", target, Endpoint.CHAT, 0, List.of()), call);
    }

    private static ChatCompletionChunk chunk(String text) {
        return ChatCompletionChunk.of(text, 0, "m", List.of(), null);
    }

    @Test
    void aCallIsInFlightUntilItEnds() {
        Sinks.Many<ChatCompletionChunk> upstream = Sinks.many().unicast().onBackpressureBuffer();
        StepVerifier.create(decorated(upstream.asFlux()))
                .then(() -> assertThat(decorator.inFlight("b")).isEqualTo(1))
                .then(() -> upstream.tryEmitNext(chunk("a")))
                .expectNextCount(1)
                .then(upstream::tryEmitComplete)
                .expectComplete()
                .verify(Duration.ofSeconds(5));
        assertThat(decorator.inFlight("b")).isZero();
        assertThat(seen).isEmpty();

        StepVerifier.create(decorated(Flux.never()))
                .then(() -> assertThat(decorator.inFlight("b")).isEqualTo(1))
                .thenCancel()
                .verify(Duration.ofSeconds(5));
        assertThat(decorator.inFlight("b")).isZero();
    }

    @Test
    void anErrorReachesTheRuleOnAWorkerBeforeItTravelsOn() {
        StepVerifier.create(decorated(Flux.concat(Flux.just(chunk("a")), Flux.error(new IllegalStateException("CUDA error")))))
                .expectNextCount(1)
                .expectErrorSatisfies(error -> {
                    assertThat(error).hasMessage("CUDA error");
                    assertThat(seen).singleElement().asString().startsWith("b: CUDA error on boundedElastic-");
                })
                .verify(Duration.ofSeconds(5));
        // counted out on the worker just after the error went on
        long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (decorator.inFlight("b") != 0 && System.nanoTime() < until) {
            Thread.onSpinWait();
        }
        assertThat(decorator.inFlight("b")).isZero();
    }
}
