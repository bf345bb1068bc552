package dev.lazarus.gateway.resilience;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.gateway.routing.AllBackendsFailedException;
import dev.lazarus.gateway.routing.AttemptLoop;
import dev.lazarus.gateway.routing.BackendCallDecorator;
import dev.lazarus.gateway.routing.BackendRegistry;
import dev.lazarus.gateway.routing.MidStreamMode;
import dev.lazarus.gateway.routing.ModelRoute;
import dev.lazarus.gateway.routing.RoutePlanner;
import dev.lazarus.gateway.routing.RouteTable;
import dev.lazarus.gateway.routing.RouteTarget;
import dev.lazarus.gateway.routing.Router;
import dev.lazarus.gateway.routing.StreamResumer;
import dev.lazarus.gateway.testing.ScriptedBackend;
import dev.lazarus.gateway.testing.ScriptedBackendFactory;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/** Active health checks drive routing: down at start is skipped, back up is routed to again. */
class HealthMonitorTest {

    private final ScriptedBackendFactory factory = new ScriptedBackendFactory();
    private final BackendRegistry backends = BackendRegistry.create(List.of(
            new BackendConfig("first", "scripted", Map.of("health", "DOWN")),
            new BackendConfig("second", "scripted", Map.of())), factory::create);
    private final HealthMonitor monitor = new HealthMonitor(backends,
            new HealthProperties(Duration.ofMillis(100), Duration.ofMillis(500)));
    private final ResilienceProperties properties = new ResilienceProperties(new ResilienceProperties.Breaker(
            50, 50, Duration.ofSeconds(2), 10, 16, 10,
            io.github.resilience4j.circuitbreaker.CircuitBreakerConfig.SlidingWindowType.COUNT_BASED, 20,
            Duration.ofSeconds(30), 3), Map.of(), MidStreamMode.RESUME, Duration.ofMinutes(1));
    private final BackendBreakers breakers = new BackendBreakers(CircuitBreakerRegistry.ofDefaults(), backends, properties);
    private final BackendAvailability availability = new BackendAvailability(monitor, breakers,
            new BackendStatsRegistry(Duration.ofMinutes(1)));
    private final Router router = new Router(
            new RouteTable(List.of(new ModelRoute("m", List.of(target("first"), target("second")), "t",
                    Duration.ofSeconds(10)))),
            RoutePlanner.configuredOrder().filteredBy(List.of(new AvailabilityRouteFilter(availability))),
            new AttemptLoop(BackendCallDecorator.chain(List.of()), StreamResumer.none()));

    private RouteTarget target(String id) {
        return new RouteTarget(backends.find(id).orElseThrow(), "m");
    }

    private ScriptedBackend scripted(String id) {
        return (ScriptedBackend) backends.find(id).orElseThrow();
    }

    @AfterEach
    void stop() {
        monitor.stop();
        backends.close();
    }

    private int callsAfterOneRequest(String id) {
        router.chat(ChatCompletionRequest.builder().model("m").messages(List.of(ChatMessage.user("hi"))).build())
                .map(ChatCompletionChunk::contentDelta).blockLast(Duration.ofSeconds(5));
        return scripted(id).calls();
    }

    @Test
    void aBackendDownAtStartIsNotCalledAndIsOnceItComesBack() throws Exception {
        monitor.start();
        assertThat(availability.isHealthy("first")).isFalse();
        assertThat(availability.lastHealth("first")).get().extracting(r -> r.health().status())
                .isEqualTo(BackendHealth.Status.DOWN);
        assertThat(callsAfterOneRequest("first")).isZero();
        assertThat(scripted("second").calls()).isEqualTo(1);

        scripted("first").setHealth(BackendHealth.Status.UP);
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (!availability.isHealthy("first") && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(availability.isHealthy("first")).as("seen by the periodic check").isTrue();
        assertThat(callsAfterOneRequest("first")).isEqualTo(1);
    }

    @Test
    void whenNoBackendIsLiveTheRouterFailsWithoutCallingAny() {
        scripted("second").setHealth(BackendHealth.Status.LOADING);
        monitor.refresh().block(Duration.ofSeconds(5));
        assertThat(availability.isAvailable("first")).isFalse();
        assertThat(availability.isAvailable("second")).isFalse();
        Mono<Throwable> failure = router.chat(ChatCompletionRequest.builder().model("m")
                        .messages(List.of(ChatMessage.user("hi"))).build())
                .then(Mono.<Throwable>empty()).onErrorResume(Mono::just);
        assertThat(failure.block(Duration.ofSeconds(5))).isInstanceOf(AllBackendsFailedException.class)
                .satisfies(e -> assertThat(((AllBackendsFailedException) e).commonRequestKind()).isNull());
        assertThat(scripted("first").calls() + scripted("second").calls()).isZero();
    }
}
