package dev.lazarus.llamacpp.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.llamacpp.wire.SseDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;
import tools.jackson.databind.json.JsonMapper;

class SlotProgressTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    /** A first-token limit of 4 s: the slots are looked at every second. */
    private static final Duration FIRST = Duration.ofSeconds(4);

    private final VirtualTimeScheduler time = VirtualTimeScheduler.create();
    private final AtomicInteger looks = new AtomicInteger();

    private static String slot(boolean processing, int processed, int total) {
        return "{\"id\":0,\"is_processing\":%s,\"n_prompt_tokens\":%d,\"n_prompt_tokens_processed\":%d}"
                .formatted(processing, total, processed);
    }

    private SlotProgress answering(List<LlamaServerClient.Answer> answers) {
        return new SlotProgress(path -> {
            assertThat(path).isEqualTo("/slots");
            int look = looks.getAndIncrement();
            return Mono.just(answers.get(Math.min(look, answers.size() - 1)));
        }, JSON, FIRST, time);
    }

    private static List<SseDecoder.Event> read(String data) {
        return new SseDecoder().feed(("event: message_start\ndata: " + data + "\n\n").getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aPromptReadFurtherAtEachLookIsProgressUntilTheFirstRead() {
        SlotProgress slots = answering(List.of(
                new LlamaServerClient.Answer(200, "[" + slot(true, 16, 96) + "," + slot(false, 0, 0) + "]"),
                new LlamaServerClient.Answer(200, "[" + slot(true, 16, 96) + "]"), // no further: not progress
                new LlamaServerClient.Answer(200, "[" + slot(true, 48, 96) + "]")));
        List<int[]> told = new ArrayList<>();
        Sinks.Many<List<SseDecoder.Event>> reads = Sinks.many().unicast().onBackpressureBuffer();
        StepVerifier.withVirtualTime(() -> slots.watch(reads.asFlux(), (processed, total) -> told.add(new int[] {processed, total})),
                        () -> time, Long.MAX_VALUE)
                .expectSubscription()
                .thenAwait(Duration.ofSeconds(1))
                .expectNext(List.of())
                .thenAwait(Duration.ofSeconds(1))
                .expectNoEvent(Duration.ofMillis(999))
                .thenAwait(Duration.ofMillis(1))
                .expectNext(List.of())
                .then(() -> reads.tryEmitNext(read("{}")))
                .expectNextMatches(events -> events.size() == 1)
                .thenAwait(Duration.ofSeconds(10)) // no look after the first read
                .then(reads::tryEmitComplete)
                .verifyComplete();
        assertThat(told).extracting(t -> t[0] + "/" + t[1]).containsExactly("16/96", "48/96");
        assertThat(looks).hasValue(3);
    }

    @Test
    void aServerWithoutSlotsIsLookedAtOnce() {
        SlotProgress slots = answering(List.of(new LlamaServerClient.Answer(501,
                "{\"error\":{\"message\":\"This server does not support slots endpoint.\"}}")));
        Sinks.Many<List<SseDecoder.Event>> reads = Sinks.many().unicast().onBackpressureBuffer();
        StepVerifier.withVirtualTime(() -> slots.watch(reads.asFlux(), null), () -> time, Long.MAX_VALUE)
                .expectSubscription()
                .expectNoEvent(Duration.ofSeconds(30))
                .then(() -> reads.tryEmitNext(read("{}")))
                .expectNextCount(1)
                .then(reads::tryEmitComplete)
                .verifyComplete();
        assertThat(looks).hasValue(1);
    }

    /** A stream that ends before a look is not held for the next one. */
    @Test
    void aShortStreamEndsWithoutWaitingForALook() {
        SlotProgress slots = answering(List.of(new LlamaServerClient.Answer(200, "[]")));
        StepVerifier.withVirtualTime(() -> slots.watch(reactor.core.publisher.Flux.just(read("{}")), null), () -> time, Long.MAX_VALUE)
                .expectSubscription()
                .expectNextCount(1)
                .verifyComplete();
        assertThat(looks).hasValue(0);
    }
}
