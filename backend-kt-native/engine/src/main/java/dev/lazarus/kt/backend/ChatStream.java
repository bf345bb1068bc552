package dev.lazarus.kt.backend;

import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.Logprobs;
import dev.lazarus.backend.api.openai.ToolCall;
import dev.lazarus.backend.api.openai.Usage;
import dev.lazarus.kt.chat.AnswerParser;
import dev.lazarus.kt.chat.AnswerPiece;
import dev.lazarus.kt.sampling.FinishReason;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import reactor.core.publisher.FluxSink;

/**
 * A generation as {@code chat.completion.chunk}s: the assistant role first, then content deltas.
 * When the model's format is parsed (a reasoning block, or tools offered), the text goes through an
 * {@link AnswerParser}: reasoning goes out as {@code reasoning_content} deltas, as llama-server streams
 * it, and each call as OpenAI streams one: a delta with its index, id, type and name, then one with
 * its arguments; the finish reason is then {@code tool_calls}. Log-probabilities of text held back by
 * the parser ride on the next chunk that goes out.
 */
final class ChatStream extends EndpointStream<ChatCompletionChunk> {

    private final String id;
    private final long created;
    private final String model;
    private final WireLogprobs wire;
    private final AnswerParser answer;
    private List<PendingLogprobs.Scored> heldLogprobs;
    private int sentCalls;

    /** @param answer the parser of the answer, or null when it is plain text */
    ChatStream(FluxSink<ChatCompletionChunk> sink, String id, long created, String model, WireLogprobs wire,
               AnswerParser answer) {
        super(sink);
        this.id = id;
        this.created = created;
        this.model = model;
        this.wire = wire;
        this.answer = answer;
    }

    @Override
    ChatCompletionChunk openingChunk() {
        return chunk(ChatCompletionChunk.Delta.role("assistant"), null, null);
    }

    @Override
    void writeText(String text, List<PendingLogprobs.Scored> logprobs) {
        if (answer == null) {
            send(chunk(ChatCompletionChunk.Delta.content(text), logprobs == null ? null : wire.chat(logprobs), null));
            return;
        }
        if (logprobs != null) {
            if (heldLogprobs == null) {
                heldLogprobs = new ArrayList<>();
            }
            heldLogprobs.addAll(logprobs);
        }
        write(answer.push(text));
    }

    @Override
    void writeFinish(FinishReason reason, String stopSequence) {
        String wireReason = reason.wireName();
        if (answer != null) {
            write(answer.finish());
            if (reason == FinishReason.STOP && sentCalls > 0) {
                wireReason = "tool_calls";
            }
        }
        ChatCompletionChunk finish = chunk(new ChatCompletionChunk.Delta(null, null, null, null), takeLogprobs(), wireReason);
        // Which stop string ended the answer, under llama-server's name for it: Anthropic's Messages tells it.
        send(stopSequence == null ? finish : new ChatCompletionChunk(finish.id(), finish.object(), finish.created(),
                finish.model(), null, finish.choices(), null, Map.of(STOPPING_WORD, stopSequence)));
    }

    private void write(List<AnswerPiece> pieces) {
        for (AnswerPiece piece : pieces) {
            switch (piece) {
                case AnswerPiece.Text t -> send(chunk(ChatCompletionChunk.Delta.content(t.text()), takeLogprobs(), null));
                case AnswerPiece.Reasoning r -> send(chunk(new ChatCompletionChunk.Delta(null, null, r.text(), null),
                        takeLogprobs(), null));
                case AnswerPiece.Call c -> {
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

    /** The finish chunk's field naming the stop string that ended the answer. */
    static final String STOPPING_WORD = "stopping_word";

    private ChatCompletionChunk chunk(ChatCompletionChunk.Delta delta, Logprobs logprobs, String finishReason) {
        return ChatCompletionChunk.of(id, created, model,
                List.of(new ChatCompletionChunk.Choice(0, delta, logprobs, finishReason)), null);
    }
}
