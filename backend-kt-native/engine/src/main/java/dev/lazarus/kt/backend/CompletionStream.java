package dev.lazarus.kt.backend;

import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.Usage;
import dev.lazarus.kt.sampling.FinishReason;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.FluxSink;

/** A generation as legacy {@code text_completion} chunks, the prompt first when it is echoed. */
final class CompletionStream extends EndpointStream<Completion> {

    private final String id;
    private final long created;
    private final String model;
    private final WireLogprobs wire;
    private final String echo;

    /** {@code echo}: the prompt text to send before the completion, or "" for none. */
    CompletionStream(FluxSink<Completion> sink, String id, long created, String model, WireLogprobs wire,
                     String echo) {
        super(sink);
        this.id = id;
        this.created = created;
        this.model = model;
        this.wire = wire;
        this.echo = echo;
    }

    @Override
    Completion openingChunk() {
        return echo.isEmpty() ? null : chunk(new Completion.Choice(0, echo, null, null));
    }

    @Override
    void writeText(String text, List<PendingLogprobs.Scored> logprobs) {
        // text offsets count from the start of the returned text, which begins with the echoed prompt
        send(chunk(new Completion.Choice(0, text,
                logprobs == null ? null : wire.legacy(logprobs, echo.length()), null)));
    }

    @Override
    void writeFinish(FinishReason reason, String stopSequence) {
        send(chunk(new Completion.Choice(0, "", null, reason.wireName())));
    }

    @Override
    Completion usageChunk(Usage usage, Map<String, Object> timings) {
        return new Completion(id, Completion.OBJECT, created, model, null, List.of(), usage,
                Map.of("timings", timings));
    }

    private Completion chunk(Completion.Choice choice) {
        return Completion.of(id, created, model, List.of(choice), null);
    }
}
