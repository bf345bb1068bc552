package dev.lazarus.gateway.resilience;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.gateway.routing.AllBackendsFailedException;
import dev.lazarus.gateway.routing.AttemptLoop;
import dev.lazarus.gateway.routing.BackendCallDecorator;
import dev.lazarus.gateway.routing.ModelRoute;
import dev.lazarus.gateway.routing.RoutePlanner;
import dev.lazarus.gateway.routing.RouteTable;
import dev.lazarus.gateway.routing.RouteTarget;
import dev.lazarus.gateway.routing.Router;
import dev.lazarus.gateway.routing.StreamResumer;
import dev.lazarus.gateway.testing.ScriptedBackend;
import dev.lazarus.gateway.testing.ScriptedBackendFactory;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * Issue 14, finding 5: a call that failed before its first token is tried again on the same
 * backend (429 after its {@code Retry-After} up to a cap, 5xx after a back-off), never past the
 * request's deadline and never after a chunk; and a first-token limit that moves the request on.
 */
class SameBackendRetryTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private final ScriptedBackend solo = backend("retry-solo");
    private final ScriptedBackend slow = backend("retry-slow");
    private final ScriptedBackend fast = backend("retry-fast");

    private static ScriptedBackend backend(String id) {
        return (ScriptedBackend) new ScriptedBackendFactory().create(new BackendConfig(id, "scripted", Map.of()));
    }

    private static AttemptProperties policy(Duration firstTokenTimeout, int retries) {
        return new AttemptProperties(firstTokenTimeout, retries, Duration.ofMillis(50), Duration.ofSeconds(2),
                Set.of(BackendErrorKind.OVERLOADED, BackendErrorKind.UPSTREAM, BackendErrorKind.UNAVAILABLE,
                        BackendErrorKind.INTERNAL), Map.of());
    }

    private Router router(AttemptProperties properties, Duration overall) {
        RouteTable routes = new RouteTable(List.of(
                new ModelRoute("solo", List.of(new RouteTarget(solo, "m")), "tests", overall),
                new ModelRoute("pair", List.of(new RouteTarget(slow, "m"), new RouteTarget(fast, "m")), "tests", overall)));
        BackendCallDecorator decorators = BackendCallDecorator.chain(List.of(
                new SameBackendRetryDecorator(properties), new FirstTokenTimeoutDecorator(properties)));
        return new Router(routes, RoutePlanner.configuredOrder(), new AttemptLoop(decorators, StreamResumer.none()));
    }

    private static ChatCompletionRequest chat(String model, Map<String, Object> script) {
        return ChatCompletionRequest.builder().model(model).messages(List.of(ChatMessage.user("hi")))
                .extra("script", script).build();
    }

    private static String text(Router router, ChatCompletionRequest request) {
        return router.chat(request).map(c -> c.contentDelta() == null ? "" : c.contentDelta())
                .reduce("", String::concat).block(WAIT);
    }

    @Test
    void aSingle5xxBeforeTheFirstTokenIsTriedAgainOnTheSameBackend() {
        Router router = router(policy(Duration.ofSeconds(30), 1), Duration.ofSeconds(30));
        String got = text(router, chat("solo", Map.of("*", Map.of("fail", "UPSTREAM", "fail_calls", 1))));
        assertThat(got).isEqualTo("Hello, world");
        assertThat(solo.calls()).isEqualTo(2);
    }

    @Test
    void a429IsTriedAgainAfterItsRetryAfter() {
        Router router = router(policy(Duration.ofSeconds(30), 1), Duration.ofSeconds(30));
        long start = System.nanoTime();
        String got = text(router, chat("solo", Map.of("*",
                Map.of("fail", "OVERLOADED", "retry_after_seconds", 1, "fail_calls", 1))));
        assertThat(got).isEqualTo("Hello, world");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(950));
    }

    @Test
    void aRetryAfterBeyondTheCapIsNotWaitedFor() {
        Router router = router(policy(Duration.ofSeconds(30), 1), Duration.ofSeconds(30));
        assertThatThrownBy(() -> text(router, chat("solo", Map.of("*",
                Map.of("fail", "OVERLOADED", "retry_after_seconds", 3, "fail_calls", 1)))))
                .isInstanceOf(AllBackendsFailedException.class);
        assertThat(solo.calls()).isEqualTo(1);
    }

    @Test
    void noWaitEndsPastTheRequestsDeadline() {
        Router router = router(policy(Duration.ofSeconds(30), 1), Duration.ofMillis(800));
        long start = System.nanoTime();
        assertThatThrownBy(() -> text(router, chat("solo", Map.of("*",
                Map.of("fail", "OVERLOADED", "retry_after_seconds", 1, "fail_calls", 1)))))
                .isInstanceOf(AllBackendsFailedException.class);
        assertThat(solo.calls()).isEqualTo(1);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(700));
    }

    @Test
    void retriesStopAtTheConfiguredCountAndTheRequestKindsAreNeverRetried() {
        Router router = router(policy(Duration.ofSeconds(30), 2), Duration.ofSeconds(30));
        assertThatThrownBy(() -> text(router, chat("solo", Map.of("*", Map.of("fail", "INTERNAL")))))
                .isInstanceOf(AllBackendsFailedException.class);
        assertThat(solo.calls()).isEqualTo(3);
        assertThatThrownBy(() -> text(router, chat("solo", Map.of("*", Map.of("fail", "INVALID_REQUEST")))))
                .isInstanceOfSatisfying(BackendException.class,
                        e -> assertThat(e.kind()).isEqualTo(BackendErrorKind.INVALID_REQUEST));
        assertThat(solo.calls()).isEqualTo(4);
    }

    @Test
    void aFailureAfterTheFirstChunkIsNotRetried() {
        Router router = router(policy(Duration.ofSeconds(30), 1), Duration.ofSeconds(30));
        List<ChatCompletionChunk> got = new java.util.ArrayList<>();
        assertThatThrownBy(() -> router.chat(chat("solo", Map.of("*", Map.of("fail", "UPSTREAM", "fail_after", 1))))
                .doOnNext(got::add).blockLast(WAIT))
                .isInstanceOf(BackendException.class);
        assertThat(solo.calls()).isEqualTo(1);
    }

    @Test
    void aBackendSilentPastTheFirstTokenTimeoutLosesTheRequestToTheNext() {
        Router router = router(policy(Duration.ofMillis(300), 0), Duration.ofSeconds(30));
        long start = System.nanoTime();
        String got = text(router, chat("pair", Map.of(
                "retry-slow", Map.of("first_delay_ms", 5_000, "tokens", List.of("late")),
                "retry-fast", Map.of())));
        assertThat(got).isEqualTo("Hello, world");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
    }

    @Test
    void defaultsAndOverridesBindFromConfiguration() {
        Binder binder = new Binder(new MapConfigurationPropertySource(Map.of(
                "lazarus.resilience.attempt.backends.hosted.retries", "0",
                "lazarus.resilience.attempt.backends.hosted.retry-on", "OVERLOADED,TIMEOUT",
                "lazarus.resilience.attempt.backends.hosted.first-token-timeout", "2m")));
        AttemptProperties properties = binder.bindOrCreate("lazarus.resilience.attempt", AttemptProperties.class);
        AttemptProperties.Policy defaults = properties.policies().of("any");
        assertThat(defaults.firstTokenTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(defaults.retries()).isEqualTo(1);
        assertThat(defaults.retryBackoff()).isEqualTo(Duration.ofMillis(250));
        assertThat(defaults.maxRetryAfter()).isEqualTo(Duration.ofSeconds(5));
        assertThat(defaults.retryOn()).containsExactlyInAnyOrder(BackendErrorKind.OVERLOADED, BackendErrorKind.UPSTREAM,
                BackendErrorKind.INTERNAL);
        AttemptProperties.Policy hosted = properties.policies().of("hosted");
        assertThat(hosted.retries()).isZero();
        assertThat(hosted.retryOn()).containsExactlyInAnyOrder(BackendErrorKind.OVERLOADED, BackendErrorKind.TIMEOUT);
        assertThat(hosted.firstTokenTimeout()).isEqualTo(Duration.ofMinutes(2));
    }

    @Test
    void perBackendOverridesWin() {
        AttemptProperties properties = new AttemptProperties(Duration.ofSeconds(30), 1, Duration.ofMillis(50),
                Duration.ofSeconds(2), Set.of(BackendErrorKind.UPSTREAM),
                Map.of("retry-solo", new AttemptProperties.Override(Duration.ofSeconds(90), 0, null, null, null)));
        assertThat(properties.policies().of("retry-solo").retries()).isZero();
        assertThat(properties.policies().of("retry-solo").firstTokenTimeout()).isEqualTo(Duration.ofSeconds(90));
        assertThat(properties.policies().of("retry-solo").retryBackoff()).isEqualTo(Duration.ofMillis(50));
        assertThat(properties.policies().of("other").retries()).isEqualTo(1);
    }

    /** Resolved once per configuration: a call's lookup makes no policy (nor copy of retry-on). */
    @Test
    void policiesAreResolvedOnceAndLookedUp() {
        AttemptProperties properties = new AttemptProperties(Duration.ofSeconds(30), 1, Duration.ofMillis(50),
                Duration.ofSeconds(2), Set.of(BackendErrorKind.UPSTREAM),
                Map.of("hosted", new AttemptProperties.Override(null, 3, null, null, Set.of(BackendErrorKind.TIMEOUT))));
        AttemptProperties.Policies policies = properties.policies();

        assertThat(policies.of("hosted")).isSameAs(policies.of("hosted"))
                .isEqualTo(new AttemptProperties.Policy(Duration.ofSeconds(30), 3, Duration.ofMillis(50),
                        Duration.ofSeconds(2), Set.of(BackendErrorKind.TIMEOUT)));
        assertThat(policies.of("a")).isSameAs(policies.of("b")).isSameAs(policies.defaults())
                .isEqualTo(new AttemptProperties.Policy(Duration.ofSeconds(30), 1, Duration.ofMillis(50),
                        Duration.ofSeconds(2), Set.of(BackendErrorKind.UPSTREAM)));
    }
}
