package dev.lazarus.kt.backend;

import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.Usage;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.FluxSink;

/** A generation as {@code chat.completion.chunk}s: the assistant role first, then content deltas. */
final class ChatStream extends EndpointStream<ChatCompletionChunk> {

    private final String id;
    private final long created;
    private final String model;
    private final WireLogprobs wire;

    ChatStream(FluxSink<ChatCompletionChunk> sink, String id, long created, String model, WireLogprobs wire) {
        super(sink);
        this.id = id;
        this.created = created;
        this.model = model;
        this.wire = wire;
    }

    @Override
    ChatCompletionChunk openingChunk() {
        return chunk(new ChatCompletionChunk.Choice(0, ChatCompletionChunk.Delta.role("assistant"), null, null));
    }

    @Override
    ChatCompletionChunk textChunk(String text, List<PendingLogprobs.Scored> logprobs) {
        return chunk(new ChatCompletionChunk.Choice(0, ChatCompletionChunk.Delta.content(text),
                logprobs == null ? null : wire.chat(logprobs), null));
    }

    @Override
    ChatCompletionChunk finishChunk(String finishReason) {
        return chunk(new ChatCompletionChunk.Choice(0, new ChatCompletionChunk.Delta(null, null, null, null), null,
                finishReason));
    }

    @Override
    ChatCompletionChunk usageChunk(Usage usage, Map<String, Object> timings) {
        return new ChatCompletionChunk(id, ChatCompletionChunk.OBJECT, created, model, null, List.of(), usage,
                Map.of("timings", timings));
    }

    private ChatCompletionChunk chunk(ChatCompletionChunk.Choice choice) {
        return ChatCompletionChunk.of(id, created, model, List.of(choice), null);
    }
}
