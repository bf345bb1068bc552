package dev.lazarus.gateway.api.anthropic;

import dev.lazarus.backend.api.ProtocolEvent;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ToolCall;
import dev.lazarus.backend.api.openai.Usage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * One chat chunk stream as one Messages event stream, in Anthropic's order: {@code message_start} and a
 * {@code ping} with the first chunk; then per content block {@code content_block_start}, its deltas
 * ({@code thinking_delta}, {@code text_delta}, {@code input_json_delta}) and {@code content_block_stop}; at the end
 * {@code message_delta} with the stop reason and usage, and {@code message_stop}. A block is closed when the
 * answer moves on to another kind (reasoning to text, text to a tool call, one tool call to the next). The chunk
 * stream may be one resumed across backends: a second role announcement is nothing new, so the client sees one
 * message. Not thread-safe: one per stream.
 */
public final class MessagesStreamTranslator {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final TypeReference<Map<String, Object>> OBJECT = new TypeReference<>() {};

    private enum Block { NONE, THINKING, TEXT, TOOL_USE }

    private final String id;
    private final String model;
    private final boolean capped;
    private boolean started;
    private Block open = Block.NONE;
    private int index = -1;
    private int toolCallIndex = -1;
    private boolean toolCalls;
    private String finishReason;
    private String stopSequence;
    private Usage usage;

    public MessagesStreamTranslator(String id, String model) {
        this(id, model, false);
    }

    /** @param capped whether the gateway's cap lowered the client's {@code max_tokens} ({@link MessagesProperties}) */
    public MessagesStreamTranslator(String id, String model, boolean capped) {
        this.id = id;
        this.model = model;
        this.capped = capped;
    }

    /** The events one chat chunk becomes (none for a chunk that adds nothing). */
    public List<MessagesEvent> onChunk(ChatCompletionChunk chunk) {
        List<MessagesEvent> events = new ArrayList<>(3);
        start(events);
        if (chunk.usage() != null) {
            usage = chunk.usage();
        }
        String stoppedOn = MessageAnswerTranslator.stoppingWord(chunk);
        if (stoppedOn != null) {
            stopSequence = stoppedOn;
        }
        if (chunk.choices() == null) {
            return events;
        }
        for (ChatCompletionChunk.Choice choice : chunk.choices()) {
            if (choice.index() != 0) {
                continue; // a Messages answer has one choice
            }
            ChatCompletionChunk.Delta delta = choice.delta();
            if (delta != null) {
                if (delta.reasoningContent() != null && !delta.reasoningContent().isEmpty()) {
                    open(events, Block.THINKING);
                    events.add(delta("thinking_delta", "thinking", delta.reasoningContent()));
                }
                if (delta.content() != null && !delta.content().isEmpty()) {
                    open(events, Block.TEXT);
                    events.add(delta("text_delta", "text", delta.content()));
                }
                if (delta.toolCalls() != null) {
                    for (ToolCall call : delta.toolCalls()) {
                        toolCall(events, call);
                    }
                }
            }
            if (choice.finishReason() != null) {
                finishReason = choice.finishReason();
            }
        }
        return events;
    }

    /** The events that end the message, once the chat stream completed. */
    public List<MessagesEvent> finish() {
        List<MessagesEvent> events = new ArrayList<>(3);
        start(events);
        close(events);
        Map<String, Object> delta = new LinkedHashMap<>();
        String stop = MessageAnswerTranslator.stoppedBy(finishReason, toolCalls, stopSequence);
        delta.put("stop_reason", stop != null ? "stop_sequence"
                : MessageAnswerTranslator.stopReason(finishReason, toolCalls, capped));
        delta.put("stop_sequence", stop);
        Map<String, Object> data = data("message_delta");
        data.put("delta", delta);
        data.put("usage", MessageAnswerTranslator.usage(usage));
        events.add(new MessagesEvent("message_delta", data));
        events.add(new MessagesEvent("message_stop", data("message_stop")));
        return events;
    }

    /**
     * Goes on from a native stream's events, cut mid-answer and resumed as chat: the message and its blocks are the
     * ones those events opened (a text answer's: one resumed with tool calls or reasoning is not), so the chunks after
     * them extend the same message.
     */
    public void resumeAfter(List<ProtocolEvent> passed) {
        for (ProtocolEvent event : passed) {
            switch (event.name()) {
                case "message_start" -> started = true;
                case "content_block_start" -> {
                    Map<String, Object> data = JSON.readValue(event.data(), OBJECT);
                    index = data.get("index") instanceof Number n ? n.intValue() : index + 1;
                    open = data.get("content_block") instanceof Map<?, ?> block && "text".equals(block.get("type"))
                            ? Block.TEXT : Block.THINKING;
                }
                case "content_block_stop" -> open = Block.NONE;
                default -> { }
            }
        }
    }

    /**
     * What a tick while the answer is awaited becomes: the message's start (and a {@code ping}) the first time, so
     * that the client has the response before the backend has read the prompt; a {@code ping} after it.
     */
    public List<MessagesEvent> keepAlive() {
        List<MessagesEvent> events = new ArrayList<>(2);
        if (started) {
            events.add(new MessagesEvent("ping", data("ping")));
        } else {
            start(events);
        }
        return events;
    }

    /** Whether {@code message_start} went out: after it a failure can only be an {@code error} event. */
    public boolean started() {
        return started;
    }

    private void start(List<MessagesEvent> events) {
        if (started) {
            return;
        }
        started = true;
        Map<String, Object> message = MessageAnswerTranslator.envelope(id, model, List.of());
        message.put("stop_reason", null);
        message.put("stop_sequence", null);
        // The prompt's size comes with the chat stream's last chunk: message_delta carries it.
        message.put("usage", MessageAnswerTranslator.usage(null));
        Map<String, Object> data = data("message_start");
        data.put("message", message);
        events.add(new MessagesEvent("message_start", data));
        events.add(new MessagesEvent("ping", data("ping")));
    }

    private void open(List<MessagesEvent> events, Block kind) {
        if (open == kind) {
            return;
        }
        close(events);
        Map<String, Object> block = new LinkedHashMap<>();
        if (kind == Block.THINKING) {
            block.put("type", "thinking");
            block.put("thinking", "");
            block.put("signature", "");
        } else {
            block.put("type", "text");
            block.put("text", "");
        }
        begin(events, kind, block);
    }

    private void toolCall(List<MessagesEvent> events, ToolCall call) {
        int callIndex = call.index() == null ? Math.max(toolCallIndex, 0) : call.index();
        String name = call.function() == null ? null : call.function().name();
        boolean next = open != Block.TOOL_USE || callIndex != toolCallIndex;
        if (next) {
            close(events);
            toolCalls = true;
            toolCallIndex = callIndex;
            begin(events, Block.TOOL_USE, MessageAnswerTranslator.toolUseStart(call.id(), name));
        }
        String arguments = call.function() == null ? null : call.function().arguments();
        if (arguments != null && !arguments.isEmpty()) {
            events.add(delta("input_json_delta", "partial_json", arguments));
        }
    }

    private void begin(List<MessagesEvent> events, Block kind, Map<String, Object> block) {
        open = kind;
        index++;
        Map<String, Object> data = data("content_block_start");
        data.put("index", index);
        data.put("content_block", block);
        events.add(new MessagesEvent("content_block_start", data));
    }

    private void close(List<MessagesEvent> events) {
        if (open == Block.NONE) {
            return;
        }
        open = Block.NONE;
        Map<String, Object> data = data("content_block_stop");
        data.put("index", index);
        events.add(new MessagesEvent("content_block_stop", data));
    }

    private MessagesEvent delta(String type, String field, String value) {
        Map<String, Object> delta = new LinkedHashMap<>();
        delta.put("type", type);
        delta.put(field, value);
        Map<String, Object> data = data("content_block_delta");
        data.put("index", index);
        data.put("delta", delta);
        return new MessagesEvent("content_block_delta", data);
    }

    private static Map<String, Object> data(String type) {
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("type", type);
        return data;
    }
}
