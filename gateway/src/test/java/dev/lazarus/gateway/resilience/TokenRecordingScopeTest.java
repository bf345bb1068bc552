package dev.lazarus.gateway.resilience;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendDescriptor;
import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.backend.api.GeneratedTokens;
import dev.lazarus.backend.api.InferenceBackend;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.CompletionRequest;
import dev.lazarus.gateway.routing.Attempt;
import dev.lazarus.gateway.routing.Endpoint;
import dev.lazarus.gateway.routing.MidStreamMode;
import dev.lazarus.gateway.routing.RouteTarget;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A backend is asked to record its answer's token ids (which costs it a little per token) only where
 * a later backend of the plan serves the same model and could continue from them.
 */
class TokenRecordingScopeTest {

    private final TranscriptDecorator decorator = new TranscriptDecorator(model -> MidStreamMode.RESUME);

    private static RouteTarget target(String id, String identity) {
        return new RouteTarget(new Identified(id, identity), "m");
    }

    private boolean recorded(RouteTarget first, List<RouteTarget> after) {
        Attempt<ChatCompletionChunk> attempt = new Attempt<>("m", first, Endpoint.CHAT, 0, after);
        Flux<ChatCompletionChunk> call = Flux.deferContextual(context -> context.hasKey(GeneratedTokens.class)
                ? Flux.just(ChatCompletionChunk.of("recorded", 0, "m", List.of(), null)) : Flux.empty());
        return Boolean.TRUE.equals(decorator.decorate(attempt, call).hasElements().block());
    }

    @Test
    void onlyWhereALaterBackendServesTheSameModel() {
        assertThat(recorded(target("a", "gguf-1"), List.of(target("b", "gguf-1")))).isTrue();
        assertThat(recorded(target("a", "gguf-1"), List.of(target("c", "gguf-2"), target("b", "gguf-1")))).isTrue();
        assertThat(recorded(target("a", "gguf-1"), List.of(target("c", "gguf-2")))).isFalse();
        assertThat(recorded(target("a", "gguf-1"), List.of())).isFalse();
        assertThat(recorded(target("a", null), List.of(target("b", null)))).isFalse();
    }

    /** A backend that only tells its token identity. */
    private record Identified(String id, String identity) implements InferenceBackend {
        @Override
        public Optional<String> tokenIdentity() {
            return Optional.ofNullable(identity);
        }

        @Override
        public BackendDescriptor describe() {
            return null;
        }

        @Override
        public Mono<BackendHealth> health() {
            return Mono.empty();
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
