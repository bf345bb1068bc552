package dev.lazarus.kt.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/**
 * The engine behind the adapter under load: one sequence at a time and one waiting place, so
 * queueing, overload refusals, cancellation and prefix reuse are all observable.
 */
class KtNativeLoadTest {

    static final int CONTEXT = 2048;

    static KtNativeBackend backend;

    @BeforeAll
    static void start() throws Exception {
        backend = EmbeddedModel.start(Map.of("context-size", CONTEXT, "max-sequences", 1, "max-queued", 1));
    }

    @AfterAll
    static void stop() {
        backend.close();
    }

    /** Greedy plain text with no token limit: runs until the context is full (~2000 tokens) unless cancelled. */
    static ChatCompletionRequest endless() {
        return ChatCompletionRequest.builder().model(EmbeddedModel.NAME)
                .messages(List.of(ChatMessage.user("Write forever"))).temperature(0.0)
                .logitBias(EmbeddedModel.noControlTokens()).build();
    }

    static long health(String key) {
        return ((Number) backend.health().block(Duration.ofSeconds(10)).details().get(key)).longValue();
    }

    static void awaitSequences(long expected) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (health("sequences") != expected) {
            assertThat(System.nanoTime()).as("%d sequences within a minute", expected).isLessThan(deadline);
            Thread.sleep(5);
        }
    }

    @Test
    void aClientThatGoesAwayCancelsItsSequence() throws Exception {
        long before = health("forward_passes");
        // role chunk + two text chunks, then take() cancels the subscription
        List<ChatCompletionChunk> seen = backend.chat(endless()).take(3).collectList().block(Duration.ofMinutes(1));
        assertThat(seen).hasSize(3);
        awaitSequences(0);
        long after = health("forward_passes");
        Thread.sleep(100);
        assertThat(health("forward_passes")).as("no work after the cancellation").isEqualTo(after);
        assertThat(after - before).as("passes run: far fewer than the ~2000 of the whole generation")
                .isLessThan(CONTEXT / 2);
    }

    @Test
    void whenTheQueueIsFullRequestsAreRefusedAsOverloaded() throws Exception {
        CountDownLatch generating = new CountDownLatch(1);
        Disposable first = backend.chat(endless()).doOnNext(c -> generating.countDown()).subscribe();
        Disposable second = null;
        try {
            assertThat(generating.await(60, TimeUnit.SECONDS)).isTrue();
            second = backend.chat(endless()).subscribe();
            awaitSequences(2); // one generating, one waiting for the only slot
            var third = backend.chat(endless());
            assertThatThrownBy(third::blockLast).isInstanceOfSatisfying(BackendException.class, e -> {
                assertThat(e.kind()).isEqualTo(BackendErrorKind.OVERLOADED);
                assertThat(e.kind().httpStatus()).isEqualTo(429);
                assertThat(e.retryAfter()).isPositive();
                assertThat(e.getMessage()).contains("max-sequences 1", "max-queued 1");
            });
        } finally {
            first.dispose();
            if (second != null) {
                second.dispose();
            }
        }
        awaitSequences(0);
        ChatCompletionRequest small = endless().toBuilder().maxTokens(2).build();
        assertThat(backend.chat(small).collectList().block(Duration.ofMinutes(1)).getLast().usage().completionTokens())
                .isEqualTo(2);
    }

    @Test
    void aRepeatedPromptReusesTheCachedPrefix() {
        // a prompt no other test used: the first request computes all but the chat template's opening
        ChatCompletionRequest request = ChatCompletionRequest.builder().model(EmbeddedModel.NAME)
                .messages(List.of(ChatMessage.user("Remember " + UUID.randomUUID()))).temperature(0.0).maxTokens(4)
                .build();
        List<ChatCompletionChunk> cold = backend.chat(request).collectList().block(Duration.ofMinutes(1));
        List<ChatCompletionChunk> warm = backend.chat(request).collectList().block(Duration.ofMinutes(1));
        int prompt = cold.getLast().usage().promptTokens();
        int coldCached = (Integer) timings(cold).get("cache_n");
        assertThat(coldCached).isLessThan(prompt / 2);
        assertThat(timings(cold)).containsEntry("prompt_n", prompt - coldCached);
        // all but the last prompt token, whose logits are needed to sample
        assertThat(timings(warm)).containsEntry("cache_n", prompt - 1).containsEntry("prompt_n", 1);
        assertThat(EmbeddedModel.text(warm)).isEqualTo(EmbeddedModel.text(cold));
        assertThat(warm.getLast().usage()).isEqualTo(cold.getLast().usage());
    }

    @Test
    void aPromptLongerThanTheContextIsAContextLengthError() {
        String huge = "word ".repeat(CONTEXT);
        var flux = backend.chat(endless().toBuilder().messages(List.of(ChatMessage.user(huge))).build());
        assertThatThrownBy(flux::blockLast).isInstanceOfSatisfying(BackendException.class, e -> {
            assertThat(e.kind()).isEqualTo(BackendErrorKind.CONTEXT_LENGTH_EXCEEDED);
            assertThat(e.kind().code()).isEqualTo("context_length_exceeded");
            assertThat(e.kind().httpStatus()).isEqualTo(400);
        });
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> timings(List<ChatCompletionChunk> chunks) {
        return (Map<String, Object>) chunks.getLast().extra().get("timings");
    }
}
