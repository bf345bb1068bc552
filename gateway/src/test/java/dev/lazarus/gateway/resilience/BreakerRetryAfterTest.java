package dev.lazarus.gateway.resilience;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.gateway.api.ApiError;
import dev.lazarus.gateway.api.ErrorMapper;
import dev.lazarus.gateway.routing.AttemptLoop;
import dev.lazarus.gateway.routing.BackendCallDecorator;
import dev.lazarus.backend.api.BackendFactories;
import dev.lazarus.gateway.routing.BackendRegistry;
import dev.lazarus.gateway.routing.MidStreamMode;
import dev.lazarus.gateway.routing.ModelRoute;
import dev.lazarus.gateway.routing.RoutePlanner;
import dev.lazarus.gateway.routing.RouteTable;
import dev.lazarus.gateway.routing.RouteTarget;
import dev.lazarus.gateway.routing.Router;
import dev.lazarus.gateway.routing.StreamResumer;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig.SlidingWindowType;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The 503's {@code Retry-After} when open breakers are why no backend is left: the time until the
 * earliest of them lets a probe through (whole seconds, rounded up, at least 1), not the configured
 * default. The breakers run on a clock the test moves; their wait (10 min) never ends by itself here.
 */
class BreakerRetryAfterTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Duration DEFAULT_RETRY = Duration.ofSeconds(5);

    private final MovableClock clock = new MovableClock();
    private BackendRegistry backends;
    private BackendBreakers breakers;
    private final ErrorMapper errors = new ErrorMapper(DEFAULT_RETRY);

    @BeforeEach
    void start() {
        BackendFactories factories = BackendFactories.load(getClass().getClassLoader());
        backends = BackendRegistry.create(List.of(new BackendConfig("one", "scripted", Map.of()),
                new BackendConfig("two", "scripted", Map.of())), factories::create);
        ResilienceProperties.Breaker limits = new ResilienceProperties.Breaker(50, 50, Duration.ofSeconds(2), 10, 4, 4,
                SlidingWindowType.COUNT_BASED, 4, WAIT, 2);
        ResilienceProperties properties = new ResilienceProperties(limits,
                Map.of("two", new ResilienceProperties.BreakerOverride(null, null, null, null, null, null, null, null,
                        Duration.ofSeconds(20), null)),
                MidStreamMode.ERROR, Duration.ofMinutes(1));
        breakers = new BackendBreakers(CircuitBreakerRegistry.ofDefaults(), backends, properties, clock);
    }

    @AfterEach
    void stop() {
        backends.close();
    }

    @Test
    void anOpenBreakerTellsTheTimeLeftUntilHalfOpen() {
        breakers.breaker("one").transitionToOpenState();
        clock.advance(Duration.ofMillis(22_300));
        assertThat(retryAfter(router(true), "solo")).isEqualTo("38"); // 37.7 s left, rounded up
        clock.advance(Duration.ofMillis(37_400));
        assertThat(retryAfter(router(true), "solo")).isEqualTo("1"); // 0.3 s left
        clock.advance(Duration.ofSeconds(5));
        assertThat(breakers.timeUntilHalfOpen("one")).as("overdue, never negative").contains(Duration.ZERO);
    }

    @Test
    void theEarliestBreakerToReopenDecides() {
        breakers.breaker("one").transitionToOpenState(); // 60 s
        breakers.breaker("two").transitionToOpenState(); // 20 s
        clock.advance(Duration.ofSeconds(4));
        assertThat(retryAfter(router(true), "pair")).isEqualTo("16");
    }

    @Test
    void aBreakerRefusingTheCallItselfTellsTheSameTime() {
        // Without the route filter the call reaches the breaker, which refuses it.
        breakers.breaker("one").transitionToOpenState();
        clock.advance(Duration.ofSeconds(10));
        assertThat(retryAfter(router(false), "solo")).isEqualTo("50");
    }

    @Test
    void withoutAKnownEndTheConfiguredValueIsSent() {
        breakers.breaker("one").transitionToForcedOpenState(); // an operator's: no end
        assertThat(retryAfter(router(true), "solo")).isEqualTo("5");
        breakers.breaker("one").transitionToOpenState();
        breakers.breaker("two").transitionToForcedOpenState();
        clock.advance(Duration.ofSeconds(30));
        assertThat(retryAfter(router(true), "pair")).as("the forced one may be closed any time: the default, if sooner")
                .isEqualTo("5");
        breakers.breaker("one").transitionToClosedState();
        assertThat(breakers.timeUntilHalfOpen("one")).isEmpty();
    }

    private Router router(boolean withFilter) {
        RouteTable routes = new RouteTable(List.of(
                new ModelRoute("solo", List.of(target("one")), "tests", Duration.ofSeconds(30)),
                new ModelRoute("pair", List.of(target("one"), target("two")), "tests", Duration.ofSeconds(30))));
        BackendStatsRegistry stats = new BackendStatsRegistry(Duration.ofMinutes(1));
        HealthMonitor health = new HealthMonitor(backends, new HealthProperties(Duration.ofHours(1), Duration.ofSeconds(1)));
        List<AvailabilityRouteFilter> filters = withFilter
                ? List.of(new AvailabilityRouteFilter(new BackendAvailability(health, breakers, stats)))
                : List.of();
        return new Router(routes, RoutePlanner.configuredOrder().filteredBy(filters),
                new AttemptLoop(BackendCallDecorator.chain(List.of(new CircuitBreakerDecorator(breakers, stats))),
                        StreamResumer.none()), filters);
    }

    private RouteTarget target(String id) {
        return new RouteTarget(backends.find(id).orElseThrow(), "m");
    }

    /** The Retry-After header of the error the client gets for a chat on {@code model}. */
    private String retryAfter(Router router, String model) {
        ChatCompletionRequest request = ChatCompletionRequest.builder().model(model)
                .messages(List.of(ChatMessage.user("hi"))).build();
        Throwable failure = router.chat(request).then().map(nothing -> (Throwable) null)
                .onErrorResume(e -> reactor.core.publisher.Mono.just(e)).block(Duration.ofSeconds(10));
        assertThat(failure).as("the request fails").isNotNull();
        ApiError error = errors.map(failure, null);
        assertThat(error.status().value()).isEqualTo(503);
        return error.headers().getFirst("Retry-After");
    }

    /** A clock the test moves by hand. */
    private static final class MovableClock extends Clock {
        private volatile Instant now = Instant.parse("2026-11-22T12:00:00Z");

        void advance(Duration by) {
            now = now.plus(by);
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }
    }
}
