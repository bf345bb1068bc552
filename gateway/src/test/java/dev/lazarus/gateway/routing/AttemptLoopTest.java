package dev.lazarus.gateway.routing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.gateway.testing.ScriptedBackendFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/** The attempt loop and its seams, without Spring. */
class AttemptLoopTest {

    private final RouteTarget first = target("loop-first");
    private final RouteTarget second = target("loop-second");

    private static RouteTarget target(String id) {
        return new RouteTarget(new ScriptedBackendFactory().create(new BackendConfig(id, "scripted", Map.of())), "m");
    }

    private static ChatCompletionRequest request(Map<String, Object> script) {
        ChatCompletionRequest.Builder b = ChatCompletionRequest.builder().model("m")
                .messages(List.of(ChatMessage.user("hi")));
        b.extra("script", script);
        return b.build();
    }

    private static String text(List<ChatCompletionChunk> chunks) {
        return chunks.stream().map(ChatCompletionChunk::contentDelta).reduce("", String::concat);
    }

    @Test
    void decoratorsWrapEveryAttemptInTheirLayersOrderOutermostFirst() {
        List<String> seen = new ArrayList<>();
        BackendCallDecorator tagA = recording("A", CallLayer.METERING, seen);
        BackendCallDecorator tagB = recording("B", CallLayer.CIRCUIT_BREAKER, seen);
        // Given innermost first: the layers, not the list, decide.
        AttemptLoop loop = new AttemptLoop(BackendCallDecorator.chain(List.of(tagB, tagA)), StreamResumer.none());
        StepVerifier.create(loop.run("m", List.of(first, second), Endpoint.CHAT,
                        request(Map.of("loop-first", Map.of("fail", "UNAVAILABLE")))).collectList())
                .assertNext(chunks -> assertThat(text(chunks)).isEqualTo("Hello, world"))
                .verifyComplete();
        assertThat(seen).containsExactly("A>loop-first", "B>loop-first", "A>loop-second", "B>loop-second");
    }

    @Test
    void aDecoratorCanRefuseACallAndTheNextBackendServes() {
        BackendCallDecorator breaker = new BackendCallDecorator() {
            @Override
            public <T> Flux<T> decorate(Attempt<T> attempt, Flux<T> call) {
                return attempt.backendId().equals("loop-first")
                        ? Flux.error(BackendException.unavailable("circuit open")) : call;
            }

            @Override
            public CallLayer layer() {
                return CallLayer.CIRCUIT_BREAKER;
            }
        };
        AttemptLoop loop = new AttemptLoop(breaker, StreamResumer.none());
        StepVerifier.create(loop.run("m", List.of(first, second), Endpoint.CHAT, request(Map.of())).collectList())
                .assertNext(chunks -> assertThat(text(chunks)).isEqualTo("Hello, world"))
                .verifyComplete();
    }

    @Test
    void aFailureAfterTheFirstChunkGoesToTheResumer() {
        List<MidStreamFailure<?, ?>> failures = new ArrayList<>();
        StreamResumer resumer = new StreamResumer() {
            @Override
            public <R, T> Flux<T> resume(MidStreamFailure<R, T> failure) {
                failures.add(failure);
                return Flux.empty();
            }
        };
        AttemptLoop loop = new AttemptLoop(BackendCallDecorator.chain(List.of()), resumer);
        StepVerifier.create(loop.run("m", List.of(first, second), Endpoint.CHAT,
                        request(Map.of("loop-first", Map.of("fail", "INTERNAL", "fail_after", 1)))).collectList())
                .assertNext(chunks -> assertThat(text(chunks)).isEqualTo("Hello"))
                .verifyComplete();
        assertThat(failures).singleElement().satisfies(f -> {
            assertThat(f.failed()).isEqualTo(first);
            assertThat(f.remaining()).containsExactly(second);
            assertThat(f.cause().kind()).isEqualTo(BackendErrorKind.INTERNAL);
        });
    }

    @Test
    void allFailuresAreReportedInOrder() {
        AttemptLoop loop = new AttemptLoop(BackendCallDecorator.chain(List.of()), StreamResumer.none());
        StepVerifier.create(loop.run("m", List.of(first, second), Endpoint.CHAT,
                        request(Map.of("loop-first", Map.of("fail", "TIMEOUT"), "loop-second", Map.of("fail", "UPSTREAM")))))
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(AllBackendsFailedException.class);
                    AllBackendsFailedException all = (AllBackendsFailedException) e;
                    assertThat(all.failures()).extracting(AllBackendsFailedException.AttemptFailure::backendId)
                            .containsExactly("loop-first", "loop-second");
                    assertThat(all.commonRequestKind()).isNull();
                })
                .verify();
    }

    @Test
    void aBackendThatThrowsInsteadOfSignallingCountsAsInternalAndFailsOver() {
        RouteTarget throwing = new RouteTarget(new ThrowingBackend(), "m");
        AttemptLoop loop = new AttemptLoop(BackendCallDecorator.chain(List.of()), StreamResumer.none());
        StepVerifier.create(loop.run("m", List.of(throwing, second), Endpoint.CHAT, request(Map.of())).count())
                .expectNext(6L)
                .verifyComplete();
    }

    private static BackendCallDecorator recording(String name, CallLayer layer, List<String> seen) {
        return new BackendCallDecorator() {
            @Override
            public <T> Flux<T> decorate(Attempt<T> attempt, Flux<T> call) {
                return Flux.defer(() -> {
                    seen.add(name + ">" + attempt.backendId());
                    return call;
                });
            }

            @Override
            public CallLayer layer() {
                return layer;
            }
        };
    }

    /** Breaks the SPI contract by throwing from chat(): the loop must still cope. */
    private static final class ThrowingBackend implements dev.lazarus.backend.api.InferenceBackend {
        public String id() {
            return "throwing";
        }

        public dev.lazarus.backend.api.BackendDescriptor describe() {
            return new dev.lazarus.backend.api.BackendDescriptor("throwing", "test", List.of(),
                    dev.lazarus.backend.api.BackendCapabilities.all());
        }

        public reactor.core.publisher.Mono<dev.lazarus.backend.api.BackendHealth> health() {
            return reactor.core.publisher.Mono.just(dev.lazarus.backend.api.BackendHealth.up());
        }

        public Flux<ChatCompletionChunk> chat(ChatCompletionRequest request) {
            throw new IllegalStateException("boom");
        }

        public Flux<dev.lazarus.backend.api.openai.Completion> completion(
                dev.lazarus.backend.api.openai.CompletionRequest request) {
            throw new IllegalStateException("boom");
        }

        public void close() {}
    }
}
