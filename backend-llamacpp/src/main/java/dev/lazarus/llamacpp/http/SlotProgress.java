package dev.lazarus.llamacpp.http;

import dev.lazarus.backend.api.PrefillProgress;
import dev.lazarus.llamacpp.wire.SseDecoder;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Prompt progress read from llama-server's {@code GET /slots}, for an endpoint on which the server sends none
 * (b11669's {@code /v1/messages} ignores {@code return_progress}): a long prompt read on a CPU would otherwise be
 * cut at the first-token limit although the server is reading it. While a stream has sent nothing, the slots are
 * looked at every period; a slot whose prompt reading moved since the last look is progress, told as
 * {@code prompt_progress} events are: an empty read (which starts the stream's own first-token limit again) and
 * the caller's {@link PrefillProgress}. The slots do not say whose prompt a slot reads, so another request's
 * prompt read on the same server counts too: that server is busy reading, not hung. A server without the endpoint
 * ({@code --no-slots}, another server) is looked at once. {@code /slots} is answered between two batches of the
 * server's work, so a look takes up to one batch.
 */
final class SlotProgress {

    private static final Duration LONGEST_PERIOD = Duration.ofSeconds(5);
    private static final Duration SHORTEST_PERIOD = Duration.ofMillis(100);

    /** One look at the slots, shared for half a period by the streams that wait at once (one GET serves them all). */
    private final Mono<LlamaServerClient.Answer> look;
    private final JsonMapper json;
    private final Duration period;
    private final Scheduler timer;

    /** @param firstToken the stream's first-token limit: looked at four times within it, at least every 5 s */
    SlotProgress(Function<String, Mono<LlamaServerClient.Answer>> get, JsonMapper json, Duration firstToken,
            Scheduler timer) {
        this.json = json;
        Duration quarter = firstToken.dividedBy(4);
        this.period = quarter.compareTo(LONGEST_PERIOD) > 0 ? LONGEST_PERIOD
                : quarter.compareTo(SHORTEST_PERIOD) < 0 ? SHORTEST_PERIOD : quarter;
        this.timer = timer;
        this.look = Mono.defer(() -> get.apply("/slots")).cache(period.dividedBy(2), timer);
    }

    /** {@code reads} with an empty read for each look at the slots that found a prompt's reading moved, until the first read. */
    Flux<List<SseDecoder.Event>> watch(Flux<List<SseDecoder.Event>> reads, PrefillProgress listener) {
        return Flux.defer(() -> {
            Sinks.One<Boolean> began = Sinks.one();
            long[] lastRead = {-1};
            Flux<List<SseDecoder.Event>> progress = Flux.interval(period, period, timer)
                    .concatMap(tick -> look.onErrorResume(e -> Mono.empty()))
                    .takeWhile(LlamaServerClient.Answer::ok)
                    .<List<SseDecoder.Event>>handle((answer, sink) -> {
                        long[] read = promptRead(answer.body());
                        if (read != null && read[0] != lastRead[0]) {
                            lastRead[0] = read[0];
                            if (listener != null) {
                                listener.progressed((int) read[0], (int) read[1]);
                            }
                            sink.next(List.of());
                        }
                    })
                    .takeUntilOther(began.asMono());
            Flux<List<SseDecoder.Event>> marked = reads.doOnEach(signal -> began.tryEmitValue(true))
                    .doFinally(signal -> began.tryEmitValue(true));
            return Flux.merge(1, marked, progress);
        });
    }

    /** The prompt tokens read and to read by the slots reading one now (summed), or null where none is. */
    private long[] promptRead(String body) {
        JsonNode slots;
        try {
            slots = json.readTree(body);
        } catch (RuntimeException e) {
            return null;
        }
        long read = 0;
        long total = 0;
        boolean reading = false;
        for (JsonNode slot : slots) {
            if (slot.path("is_processing").asBoolean(false)) {
                long processed = slot.path("n_prompt_tokens_processed").asLong(0);
                if (processed > 0) {
                    reading = true;
                    read += processed;
                    total += slot.path("n_prompt_tokens").asLong(0);
                }
            }
        }
        return reading ? new long[] {read, total} : null;
    }
}
