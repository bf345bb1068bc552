package dev.lazarus.kt.backend;

import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.Logprobs;
import dev.lazarus.backend.api.openai.ToolCall;
import dev.lazarus.backend.api.openai.Usage;
import dev.lazarus.kt.chat.ToolCallParser;
import dev.lazarus.kt.sampling.FinishReason;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import reactor.core.publisher.FluxSink;

/**
 * A generation as {@code chat.completion.chunk}s: the assistant role first, then content deltas.
 * When the request offers tools, the text goes through a {@link ToolCallParser} and each call is
 * sent as OpenAI streams one: a delta with its index, id, type and name, then one with its
 * arguments; the finish reason is then {@code tool_calls}. Log-probabilities of text held back by
 * the parser ride on the next chunk that goes out.
 */
final class ChatStream extends EndpointStream<ChatCompletionChunk> {

    private final String id;
    private final long created;
    private final String model;
    private final WireLogprobs wire;
    private final ToolCallParser toolCalls;
    private List<PendingLogprobs.Scored> heldLogprobs;
    private int sentCalls;

    /** @param toolCalls the parser of tool calls, or null when the answer is plain text */
    ChatStream(FluxSink<ChatCompletionChunk> sink, String id, long created, String model, WireLogprobs wire,
               ToolCallParser toolCalls) {
        super(sink);
        this.id = id;
        this.created = created;
        this.model = model;
        this.wire = wire;
        this.toolCalls = toolCalls;
    }

    @Override
    ChatCompletionChunk openingChunk() {
        return chunk(ChatCompletionChunk.Delta.role("assistant"), null, null);
    }

    @Override
    void writeText(String text, List<PendingLogprobs.Scored> logprobs) {
        if (toolCalls == null) {
            send(chunk(ChatCompletionChunk.Delta.content(text), logprobs == null ? null : wire.chat(logprobs), null));
            return;
        }
        if (logprobs != null) {
            if (heldLogprobs == null) {
                heldLogprobs = new ArrayList<>();
            }
            heldLogprobs.addAll(logprobs);
        }
        write(toolCalls.push(text));
    }

    @Override
    void writeFinish(FinishReason reason) {
        String wireReason = reason.wireName();
        if (toolCalls != null) {
            write(toolCalls.finish());
            if (reason == FinishReason.STOP && sentCalls > 0) {
                wireReason = "tool_calls";
            }
        }
        send(chunk(new ChatCompletionChunk.Delta(null, null, null, null), takeLogprobs(), wireReason));
    }

    private void write(List<ToolCallParser.Piece> pieces) {
        for (ToolCallParser.Piece piece : pieces) {
            switch (piece) {
                case ToolCallParser.Text t -> send(chunk(ChatCompletionChunk.Delta.content(t.text()), takeLogprobs(), null));
                case ToolCallParser.Call c -> {
                    int index = sentCalls++;
                    send(chunk(toolCallDelta(new ToolCall(index, newCallId(), "function",
                            new ToolCall.FunctionCall(c.name(), ""))), takeLogprobs(), null));
                    send(chunk(toolCallDelta(new ToolCall(index, null, null,
                            new ToolCall.FunctionCall(null, c.arguments()))), null, null));
                }
            }
        }
    }

    @Override
    ChatCompletionChunk usageChunk(Usage usage, Map<String, Object> timings) {
        return new ChatCompletionChunk(id, ChatCompletionChunk.OBJECT, created, model, null, List.of(), usage,
                Map.of("timings", timings));
    }

    private Logprobs takeLogprobs() {
        if (heldLogprobs == null || heldLogprobs.isEmpty()) {
            return null;
        }
        Logprobs out = wire.chat(heldLogprobs);
        heldLogprobs = null;
        return out;
    }

    private static ChatCompletionChunk.Delta toolCallDelta(ToolCall call) {
        return new ChatCompletionChunk.Delta(null, null, null, List.of(call));
    }

    /** OpenAI's form of a call id: {@code call_} and 24 letters and digits. */
    private static String newCallId() {
        return "call_" + UUID.randomUUID().toString().replace("-", "").substring(0, 24);
    }

    private ChatCompletionChunk chunk(ChatCompletionChunk.Delta delta, Logprobs logprobs, String finishReason) {
        return ChatCompletionChunk.of(id, created, model,
                List.of(new ChatCompletionChunk.Choice(0, delta, logprobs, finishReason)), null);
    }
}
