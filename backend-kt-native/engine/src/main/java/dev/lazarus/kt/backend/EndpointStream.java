package dev.lazarus.kt.backend;

import dev.lazarus.backend.api.openai.Usage;
import dev.lazarus.kt.sampling.FinishReason;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.FluxSink;

/**
 * Writes a generation's events into a stream of one endpoint's chunks, in the order the SPI
 * promises: an optional opening chunk, text chunks, a chunk with the finish reason, and a last
 * chunk with usage and no choices. Subclasses only shape the chunks. The opening chunk goes out
 * with the first event, so a request the engine refuses (overloaded, too long) fails before any
 * chunk and the gateway can still try another backend.
 */
abstract class EndpointStream<T> implements GenerationEvents {

    private final FluxSink<T> sink;
    private boolean opened;

    EndpointStream(FluxSink<T> sink) {
        this.sink = sink;
    }

    /** What comes before the first text (the chat role), or null. */
    abstract T openingChunk();

    /** Writes new text, usually as one chunk; a stream that parses the text may hold some of it back. */
    abstract void writeText(String text, List<PendingLogprobs.Scored> logprobs);

    /** Writes what is still held back, then the chunk with the finish reason (and the stop string that ended it, or null). */
    abstract void writeFinish(FinishReason reason, String stopSequence);

    /** The last chunk: no choices, the usage, and llama-server style {@code timings} counts. */
    abstract T usageChunk(Usage usage, Map<String, Object> timings);

    @Override
    public final void text(String delta, List<PendingLogprobs.Scored> logprobs) {
        open();
        writeText(delta, logprobs);
    }

    @Override
    public final void finish(FinishReason reason, String stopSequence, Usage usage, int reusedPromptTokens) {
        open();
        writeFinish(reason, stopSequence);
        // cache_n: prompt tokens whose keys and values came from the prefix cache (as llama-server reports it)
        sink.next(usageChunk(usage, Map.of("prompt_n", usage.promptTokens() - reusedPromptTokens,
                "cache_n", reusedPromptTokens, "predicted_n", usage.completionTokens())));
        sink.complete();
    }

    final void send(T chunk) {
        sink.next(chunk);
    }

    @Override
    public final void error(Throwable error) {
        sink.error(error);
    }

    private void open() {
        if (!opened) {
            opened = true;
            T opening = openingChunk();
            if (opening != null) {
                sink.next(opening);
            }
        }
    }
}
