package dev.lazarus.gateway.resilience;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.CallContext;
import dev.lazarus.backend.api.PrefillProgress;
import dev.lazarus.backend.api.WholeAnswer;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.gateway.routing.Attempt;
import dev.lazarus.gateway.routing.Endpoint;
import dev.lazarus.gateway.routing.RouteTarget;
import dev.lazarus.gateway.testing.ScriptedBackendFactory;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The first-token limit (issue 14) pinned on virtual time: it ends a silent call with TIMEOUT and
 * cancels it, and it is over once anything came: later gaps, an early end or error pass as they are.
 */
class FirstTokenTimeoutDecoratorTest {

    private static final Duration LIMIT = Duration.ofSeconds(2);
    private static final Duration ANSWER_LIMIT = Duration.ofSeconds(60);

    private final FirstTokenTimeoutDecorator decorator = new FirstTokenTimeoutDecorator(new AttemptProperties(
            Duration.ofSeconds(30), 0, Duration.ZERO, Duration.ZERO, Set.of(),
            Map.of("b", new AttemptProperties.Override(LIMIT, null, null, null, null)), ANSWER_LIMIT));
    private final RouteTarget target = new RouteTarget(
            new ScriptedBackendFactory().create(new BackendConfig("b", "scripted", Map.of())), "m");

    private Flux<ChatCompletionChunk> decorated(Flux<ChatCompletionChunk> call) {
        return decorator.decorate(new Attempt<>("m", target, Endpoint.CHAT, 0, List.of()), call);
    }

    private static ChatCompletionChunk chunk(String text) {
        return ChatCompletionChunk.of(text, 0, "m", List.of(), null);
    }

    private static boolean isTimeout(Throwable e, String says) {
        return e instanceof BackendException b && b.kind() == BackendErrorKind.TIMEOUT && b.getMessage().contains(says);
    }

    @Test
    void aSilentCallEndsWithTimeoutAtTheLimitAndIsCancelled() {
        AtomicBoolean cancelled = new AtomicBoolean();
        StepVerifier.withVirtualTime(() -> decorated(Flux.<ChatCompletionChunk>never().doOnCancel(() -> cancelled.set(true))))
                .expectSubscription()
                .expectNoEvent(LIMIT.minusMillis(1))
                .thenAwait(Duration.ofMillis(1))
                .expectErrorMatches(e -> isTimeout(e, "backend 'b' sent no first token within PT2S"))
                .verify(Duration.ofSeconds(5));
        assertThat(cancelled).isTrue();
    }

    /** A call that reads its prompt for {@code reads} steps of {@code step} (telling each), then answers {@code a}. */
    private static Flux<ChatCompletionChunk> readingThePrompt(int reads, Duration step, Flux<ChatCompletionChunk> then) {
        return Flux.deferContextual(context -> {
            PrefillProgress progress = CallContext.prefillProgress(context).orElseThrow();
            return Flux.interval(step).take(reads)
                    .doOnNext(i -> progress.progressed((int) (i + 1) * 128, reads * 128))
                    .thenMany(then);
        });
    }

    @Test
    void progressReadingThePromptStartsTheLimitAgainAndTheFirstChunkStillEndsIt() {
        ChatCompletionChunk a = chunk("a");
        Duration step = LIMIT.minusMillis(500);
        StepVerifier.withVirtualTime(() -> decorated(readingThePrompt(4, step,
                        Flux.concat(Mono.delay(step).thenReturn(a), Mono.delay(LIMIT.multipliedBy(3)).then(Mono.empty())))))
                .expectSubscription()
                .expectNoEvent(step.multipliedBy(5).minusMillis(1)) // four times the limit and more, without a chunk
                .thenAwait(Duration.ofMillis(1))
                .expectNext(a)
                .thenAwait(LIMIT.multipliedBy(3)) // past the first chunk, progress has no say
                .verifyComplete();
    }

    @Test
    void aCallWhoseProgressStopsEndsTheLimitAfterTheLastProgress() {
        Duration step = LIMIT.minusMillis(500);
        StepVerifier.withVirtualTime(() -> decorated(readingThePrompt(2, step, Flux.never())))
                .expectSubscription()
                .expectNoEvent(step.multipliedBy(2).plus(LIMIT).minusMillis(1))
                .thenAwait(Duration.ofMillis(1))
                .expectErrorMatches(e -> isTimeout(e, "backend 'b' sent no first token within PT2S"))
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void afterTheFirstChunkGapsLongerThanTheLimitPass() {
        ChatCompletionChunk a = chunk("a");
        ChatCompletionChunk b = chunk("b");
        StepVerifier.withVirtualTime(() -> decorated(Flux.concat(Mono.delay(LIMIT.minusMillis(10)).thenReturn(a),
                        Mono.delay(LIMIT.multipliedBy(5)).thenReturn(b), Mono.delay(LIMIT.multipliedBy(5)).then(Mono.<ChatCompletionChunk>empty()))))
                .expectSubscription()
                .thenAwait(LIMIT.minusMillis(10))
                .expectNext(a)
                .thenAwait(LIMIT.multipliedBy(5))
                .expectNext(b)
                .thenAwait(LIMIT.multipliedBy(5))
                .verifyComplete();
    }

    @Test
    void anEarlyEndOrErrorPassesAndNoTimeoutFollows() {
        StepVerifier.withVirtualTime(() -> decorated(Mono.delay(Duration.ofSeconds(1)).thenMany(Flux.empty())))
                .expectSubscription()
                .thenAwait(Duration.ofSeconds(1))
                .verifyComplete();
        BackendException refused = new BackendException(BackendErrorKind.OVERLOADED, "busy");
        StepVerifier.withVirtualTime(() -> decorated(Mono.delay(Duration.ofSeconds(1))
                        .thenMany(Flux.<ChatCompletionChunk>error(refused))))
                .expectSubscription()
                .thenAwait(Duration.ofSeconds(1))
                .expectErrorSatisfies(e -> assertThat(e).isSameAs(refused))
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void aCallThatAnswersAtOnceIsPassedOn() {
        ChatCompletionChunk a = chunk("a");
        StepVerifier.withVirtualTime(() -> decorated(Flux.just(a)))
                .expectNext(a)
                .verifyComplete();
    }

    @Test
    void aWholeAnswerHasTheAnswerLimit() {
        Attempt<WholeAnswer> whole = new Attempt<>("m", target, Endpoint.CHAT_WHOLE, 0, List.of());
        StepVerifier.withVirtualTime(() -> decorator.decorate(whole, Flux.<WholeAnswer>never()))
                .expectSubscription()
                .expectNoEvent(ANSWER_LIMIT.minusMillis(1))
                .thenAwait(Duration.ofMillis(1))
                .expectErrorMatches(e -> isTimeout(e, "backend 'b' did not answer within PT1M"))
                .verify(Duration.ofSeconds(5));
    }
    @Test
    void aWholeAnswerWhoseBackendDoesNotAnswerItsHealthCheckEndsAtTheFirstTokenLimit() {
        AtomicBoolean cancelled = new AtomicBoolean();
        FirstTokenTimeoutDecorator checked = withHealth(id -> Mono.delay(Duration.ofSeconds(1)).thenReturn(false));
        Attempt<WholeAnswer> whole = new Attempt<>("m", target, Endpoint.CHAT_WHOLE, 0, List.of());
        StepVerifier.withVirtualTime(() -> checked.decorate(whole,
                        Flux.<WholeAnswer>never().doOnCancel(() -> cancelled.set(true))))
                .expectSubscription()
                .expectNoEvent(LIMIT.plusSeconds(1).minusMillis(1))
                .thenAwait(Duration.ofMillis(1))
                .expectErrorMatches(e -> isTimeout(e,
                        "backend 'b' sent nothing within PT2S and did not answer its health check"))
                .verify(Duration.ofSeconds(5));
        assertThat(cancelled).isTrue();
    }

    @Test
    void aWholeAnswerWhoseBackendIsUpIsWaitedForUntilTheAnswerLimit() {
        FirstTokenTimeoutDecorator checked = withHealth(id -> Mono.just(true));
        Attempt<WholeAnswer> whole = new Attempt<>("m", target, Endpoint.CHAT_WHOLE, 0, List.of());
        StepVerifier.withVirtualTime(() -> checked.decorate(whole, Flux.<WholeAnswer>never()))
                .expectSubscription()
                .expectNoEvent(ANSWER_LIMIT.minusMillis(1))
                .thenAwait(Duration.ofMillis(1))
                .expectErrorMatches(e -> isTimeout(e, "backend 'b' did not answer within PT1M"))
                .verify(Duration.ofSeconds(5));
    }

    private static FirstTokenTimeoutDecorator withHealth(java.util.function.Function<String, Mono<Boolean>> alive) {
        return new FirstTokenTimeoutDecorator(new AttemptProperties(
                Duration.ofSeconds(30), 0, Duration.ZERO, Duration.ZERO, Set.of(),
                Map.of("b", new AttemptProperties.Override(LIMIT, null, null, null, null)), ANSWER_LIMIT), alive);
    }
}
