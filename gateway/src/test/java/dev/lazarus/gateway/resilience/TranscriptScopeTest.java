package dev.lazarus.gateway.resilience;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.gateway.routing.ApiEndpoint;
import dev.lazarus.gateway.routing.Attempt;
import dev.lazarus.gateway.routing.Endpoint;
import dev.lazarus.gateway.routing.MidStreamFailure;
import dev.lazarus.gateway.routing.MidStreamMode;
import dev.lazarus.gateway.routing.ProtocolContinuation;
import dev.lazarus.gateway.routing.ProtocolPiece;
import dev.lazarus.gateway.routing.RouteTarget;
import dev.lazarus.gateway.routing.RoutingListener;
import dev.lazarus.gateway.testing.ScriptedBackendFactory;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/**
 * The relayed text a mid-stream resume needs is kept only where a backend is left to resume on: a stream on its
 * route's last backend holds no copy of its answer; its counts still end an answer cut at its limit.
 */
class TranscriptScopeTest {

    private final TranscriptDecorator decorator = new TranscriptDecorator(model -> MidStreamMode.RESUME);
    private static final BackendException RESET = new BackendException(BackendErrorKind.UPSTREAM, "reset");

    private static RouteTarget target(String id) {
        return new RouteTarget(new ScriptedBackendFactory().create(new BackendConfig(id, "scripted", Map.of())), "m");
    }

    private static ChatCompletionChunk content(String text) {
        return ChatCompletionChunk.of("a", 1, "m", List.of(new ChatCompletionChunk.Choice(0,
                ChatCompletionChunk.Delta.content(text), null, null)), null);
    }

    private Transcript cut(List<RouteTarget> after) {
        Attempt<ChatCompletionChunk> attempt = new Attempt<>("m", target("a"), Endpoint.CHAT, 0, after);
        Throwable error = decorator.decorate(attempt, Flux.just(content("Hel"), content("lo"))
                .concatWith(Flux.error(RESET))).then().materialize().block().getThrowable();
        assertThat(error).isInstanceOf(InterruptedStreamException.class);
        return ((InterruptedStreamException) error).transcript();
    }

    @Test
    void theTextIsKeptOnlyWhereABackendIsLeft() {
        Transcript resumable = cut(List.of(target("b")));
        assertThat(resumable.text()).isEqualTo("Hello");
        assertThat(resumable.tokens()).isEqualTo(2);
        Transcript last = cut(List.of());
        assertThat(last.text()).as("no backend left to go on from it").isEmpty();
        assertThat(last.tokens()).isEqualTo(2);
    }

    /** A native protocol stream is planned as its route's last candidate; it goes on on its continuation's plan. */
    @Test
    void aNativeProtocolStreamKeepsItWhereItsContinuationHasABackendLeft() {
        RouteTarget a = target("a");
        Endpoint<Map<String, Object>, ProtocolPiece> messages = Endpoint.protocolEvents(ApiEndpoint.MESSAGES);
        Attempt<ProtocolPiece> attempt = new Attempt<>("m", a, messages, 0, List.of());
        Flux<ProtocolPiece> call = Flux.<ProtocolPiece>just(new ProtocolPiece.Events(List.of(), null, 1, "Hel", false))
                .concatWith(Flux.error(RESET));
        ChatCompletionRequest chat = ChatCompletionRequest.builder().model("m").messages(List.of(ChatMessage.user("hi")))
                .build();
        for (List<RouteTarget> plan : List.of(List.of(a, target("b")), List.of(a))) {
            ProtocolContinuation continuation = new ProtocolContinuation(chat, plan, (p, r) -> Flux.empty());
            StepVerifier.create(decorator.decorate(attempt, call)
                            .contextWrite(context -> context.put(ProtocolContinuation.class, continuation)))
                    .expectNextCount(1)
                    .expectErrorSatisfies(e -> assertThat(((InterruptedStreamException) e).transcript().text())
                            .as("plan of %d", plan.size()).isEqualTo(plan.size() > 1 ? "Hel" : ""))
                    .verify();
        }
        StepVerifier.create(decorator.decorate(attempt, call)).expectNextCount(1)
                .expectErrorSatisfies(e -> assertThat(((InterruptedStreamException) e).transcript().text()).isEmpty())
                .verify();
    }

    /** Cut between its last allowed token and its end on the last backend: the end is still made from the counts. */
    @Test
    void anAnswerCutAtItsLimitOnTheLastBackendStillEnds() {
        Transcript last = cut(List.of());
        ResumingStreamResumer resumer = new ResumingStreamResumer(model -> MidStreamMode.RESUME, new RoutingListener() {
        });
        ChatCompletionRequest request = ChatCompletionRequest.builder().model("m")
                .messages(List.of(ChatMessage.user("hi"))).maxTokens(2).build();
        StepVerifier.create(resumer.resume(new MidStreamFailure<>("m", request, Endpoint.CHAT, target("a"), List.of(),
                        new InterruptedStreamException(RESET, last), (plan, next) -> Flux.empty())))
                .expectNextMatches(chunk -> "length".equals(chunk.choices().getFirst().finishReason()))
                .thenConsumeWhile(chunk -> chunk.choices().isEmpty())
                .verifyComplete();
    }
}
