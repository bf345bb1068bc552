package dev.lazarus.gateway.resilience;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.ToolCall;
import dev.lazarus.backend.api.openai.Usage;
import dev.lazarus.gateway.routing.Endpoint;
import dev.lazarus.gateway.routing.MidStreamFailure;
import dev.lazarus.gateway.routing.MidStreamMode;
import dev.lazarus.gateway.routing.RouteTarget;
import dev.lazarus.gateway.routing.RoutingListener;
import dev.lazarus.gateway.testing.ScriptedBackendFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/** The resumer's decisions, without Spring: when it refuses and what it sends on. */
class ResumingStreamResumerTest {

    private final List<String> refusals = new ArrayList<>();
    private final List<ChatCompletionRequest> continued = new ArrayList<>();
    private final ResumingStreamResumer resumer = new ResumingStreamResumer(model -> MidStreamMode.RESUME,
            new RoutingListener() {
                @Override
                public void notResumed(String model, String from, BackendException reason, String why) {
                    refusals.add(why);
                }
            });

    private static RouteTarget target(String id, boolean prefill) {
        return new RouteTarget(new ScriptedBackendFactory().create(new BackendConfig(id, "scripted",
                Map.of("assistant-prefill", prefill))), "m");
    }

    private MidStreamFailure<ChatCompletionRequest, ChatCompletionChunk> failure(Transcript transcript,
            List<RouteTarget> remaining, Integer maxTokens) {
        return failure(transcript, remaining, maxTokens, Usage.of(20, 1));
    }

    private MidStreamFailure<ChatCompletionRequest, ChatCompletionChunk> failure(Transcript transcript,
            List<RouteTarget> remaining, Integer maxTokens, Usage continuationUsage) {
        ChatCompletionRequest request = ChatCompletionRequest.builder().model("m")
                .messages(List.of(ChatMessage.user("hi"))).maxTokens(maxTokens).build();
        BackendException cause = new InterruptedStreamException(
                new BackendException(BackendErrorKind.UPSTREAM, "reset"), transcript);
        return new MidStreamFailure<>("m", request, Endpoint.CHAT, target("failed", true), remaining, cause,
                (plan, next) -> {
                    continued.add(next);
                    return Flux.just(
                            ChatCompletionChunk.of("x", 1, "m", List.of(new ChatCompletionChunk.Choice(0,
                                    ChatCompletionChunk.Delta.role("assistant"), null, null)), null),
                            ChatCompletionChunk.of("x", 1, "m", List.of(new ChatCompletionChunk.Choice(0,
                                    ChatCompletionChunk.Delta.content(" more"), null, "stop")), null),
                            ChatCompletionChunk.of("x", 1, "m", List.of(), continuationUsage));
                });
    }

    private static Transcript transcript(ChatCompletionChunk... chunks) {
        Transcript t = new Transcript();
        for (ChatCompletionChunk c : chunks) {
            t.add(c, ChunkInspector.CHAT);
        }
        return t;
    }

    private static ChatCompletionChunk content(String text) {
        return ChatCompletionChunk.of("a", 1, "m", List.of(new ChatCompletionChunk.Choice(0,
                ChatCompletionChunk.Delta.content(text), null, null)), null);
    }

    /** A llama-server's first token with per-token timings: {@code prompt} tokens, 3 of them evaluated, the rest cached. */
    private static ChatCompletionChunk timed(String text, int prompt) {
        return new ChatCompletionChunk("a", ChatCompletionChunk.OBJECT, 1, "m", null,
                List.of(new ChatCompletionChunk.Choice(0, ChatCompletionChunk.Delta.content(text), null, null)), null,
                new java.util.LinkedHashMap<>(Map.of("timings", Map.of("prompt_n", 3, "cache_n", prompt - 3, "predicted_n", 1))));
    }

    @Test
    void aToolCallInProgressIsNotResumed() {
        ChatCompletionChunk toolCall = ChatCompletionChunk.of("a", 1, "m", List.of(new ChatCompletionChunk.Choice(0,
                new ChatCompletionChunk.Delta(null, null, null, List.of(new ToolCall(0, "call_1", "function",
                        new ToolCall.FunctionCall("get_weather", "{\"ci")))), null, null)), null);
        StepVerifier.create(resumer.resume(failure(transcript(toolCall), List.of(target("next", true)), 50)))
                .expectErrorSatisfies(e -> assertThat(((BackendException) e).kind()).isEqualTo(BackendErrorKind.UPSTREAM))
                .verify();
        assertThat(continued).isEmpty();
        assertThat(refusals).singleElement().asString().contains("tool calls");
    }

    @Test
    void onlyBackendsThatContinueAnAssistantMessageAreUsed() {
        StepVerifier.create(resumer.resume(failure(transcript(content("Hi")), List.of(target("next", false)), 50)))
                .expectError(BackendException.class)
                .verify();
        assertThat(continued).isEmpty();
        assertThat(refusals).singleElement().asString().contains("no remaining backend");
    }

    @Test
    void theContinuationHasThePrefixAndTheRestOfTheBudgetAndNoSecondRole() {
        StepVerifier.create(resumer.resume(failure(transcript(content("Hel"), content("lo")),
                        List.of(target("next", true)), 50)))
                .assertNext(c -> assertThat(c.contentDelta()).isEqualTo(" more"))
                .assertNext(c -> assertThat(c.usage()).isEqualTo(new Usage(18, 3, 21)))
                .verifyComplete();
        ChatCompletionRequest next = continued.getFirst();
        assertThat(next.messages().getLast()).isEqualTo(ChatMessage.assistant("Hello"));
        assertThat(next.maxTokens()).isEqualTo(48);
    }

    /** Issue 35: max_tokens beside a larger max_completion_tokens must not reach the next backend negative. */
    @Test
    void bothLimitsOfTheContinuationAreWhatIsLeftNeverNegative() {
        ChatCompletionRequest request = ChatCompletionRequest.builder().model("m")
                .messages(List.of(ChatMessage.user("hi"))).maxTokens(3).maxCompletionTokens(10).build();
        Transcript five = transcript(content("a"), content("b"), content("c"), content("d"), content("e"));
        ChatCompletionRequest next = Continuation.CHAT.after(request, five);
        assertThat(next.maxCompletionTokens()).isEqualTo(5);
        assertThat(next.maxTokens()).isEqualTo(5);
        ChatCompletionRequest onlyMaxTokens = ChatCompletionRequest.builder().model("m")
                .messages(List.of(ChatMessage.user("hi"))).maxTokens(2).build();
        assertThat(Continuation.CHAT.after(onlyMaxTokens, five).maxTokens()).isEqualTo(1);
        assertThat(Continuation.CHAT.after(onlyMaxTokens, five).maxCompletionTokens()).isNull();
    }

    @Test
    void thePromptIsTheInterruptedBackendsOwnCountAndTheContinuationsDetailsAreKept() {
        // llama-server with timings_per_token: its first token says the prompt was 9 cached + 3 evaluated.
        ChatCompletionChunk first = timed("Hel", 12);
        Usage continuation = new Usage(20, 1, 21, Map.of("cached_tokens", 19), Map.of("reasoning_tokens", 0));
        StepVerifier.create(resumer.resume(failure(transcript(first, content("lo")),
                        List.of(target("next", true)), 50, continuation)))
                .assertNext(c -> assertThat(c.contentDelta()).isEqualTo(" more"))
                .assertNext(c -> assertThat(c.usage()).isEqualTo(new Usage(12, 3, 15,
                        Map.of("cached_tokens", 12), Map.of("reasoning_tokens", 0))))
                .verifyComplete();
    }

    @Test
    void anAnswerThatHadReachedItsLimitOnlyGetsItsEnd() {
        StepVerifier.create(resumer.resume(failure(transcript(timed("a", 7), content("b")),
                        List.of(target("next", true)), 2)))
                .assertNext(c -> assertThat(c.choices().getFirst().finishReason()).isEqualTo("length"))
                .assertNext(c -> assertThat(c.usage()).isEqualTo(Usage.of(7, 2)))
                .verifyComplete();
        assertThat(continued).isEmpty();
    }
}
