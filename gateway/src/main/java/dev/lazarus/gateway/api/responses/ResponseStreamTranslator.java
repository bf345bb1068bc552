package dev.lazarus.gateway.api.responses;

import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ToolCall;
import dev.lazarus.backend.api.openai.Usage;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * One chat chunk stream as one Responses event stream, in OpenAI's order: {@code response.created} and
 * {@code response.in_progress} with the first chunk, then per output item (reasoning, a message, a function
 * call) its {@code output_item.added}, content part, deltas and the matching {@code done} events, and
 * {@code response.completed} (or {@code response.incomplete} when the answer hit the client's {@code max_output_tokens}) at the end.
 * Every event carries the next {@code sequence_number}. A stream resumed on another backend is one chunk stream
 * here, so the client sees one response. Not thread-safe: one per request, fed in order.
 */
final class ResponseStreamTranslator {

    private enum Kind { REASONING, MESSAGE, FUNCTION_CALL }

    /** The output item being written. */
    private static final class Open {
        final Kind kind;
        final ObjectNode item;
        final int index;
        final StringBuilder text = new StringBuilder();

        Open(Kind kind, ObjectNode item, int index) {
            this.kind = kind;
            this.item = item;
            this.index = index;
        }
    }

    private final JsonMapper json;
    private final ResponseObjects objects;
    private final ObjectNode start;
    private final List<ObjectNode> output = new ArrayList<>();
    /** The function call item of each chat tool-call index. */
    private final Map<Integer, Open> calls = new HashMap<>();
    private Open open;
    private int sequence;
    private boolean started;
    private String finishReason;
    private Usage usage;
    private ObjectNode result;

    /** @param start the response as {@link ResponseObjects#start} made it */
    ResponseStreamTranslator(JsonMapper json, ResponseObjects objects, ObjectNode start) {
        this.json = json;
        this.objects = objects;
        this.start = start;
    }

    /** The events one chat chunk adds (the first chunk also opens the response). */
    List<ObjectNode> onChunk(ChatCompletionChunk chunk) {
        List<ObjectNode> events = open();
        if (chunk.usage() != null) {
            usage = chunk.usage();
        }
        if (chunk.choices() == null) {
            return events;
        }
        for (ChatCompletionChunk.Choice choice : chunk.choices()) {
            if (choice.index() != 0) {
                continue;
            }
            ChatCompletionChunk.Delta delta = choice.delta();
            if (delta != null) {
                if (delta.reasoningContent() != null && !delta.reasoningContent().isEmpty()) {
                    text(events, Kind.REASONING, delta.reasoningContent());
                }
                if (delta.content() != null && !delta.content().isEmpty()) {
                    text(events, Kind.MESSAGE, delta.content());
                }
                if (delta.toolCalls() != null) {
                    delta.toolCalls().forEach(call -> toolCall(events, call));
                }
            }
            if (choice.finishReason() != null) {
                finishReason = choice.finishReason();
            }
        }
        return events;
    }

    /** The events that end the response once the chat stream ended. */
    List<ObjectNode> complete() {
        List<ObjectNode> events = open(); // a backend that ended without a chunk: the response still opens and closes
        close(events);
        // Cut by the client's own max_output_tokens: incomplete, as OpenAI says it. A length stop the client
        // set no limit for is the server's cap (llama-server's --n-predict): the answer is what the server
        // gives, complete, as llama-server's own Responses endpoint reports it (agents such as Codex fail a
        // turn that ends incomplete).
        boolean asked = start.get("max_output_tokens") != null && !start.get("max_output_tokens").isNull();
        boolean length = "length".equals(finishReason) && asked;
        boolean cut = length || "content_filter".equals(finishReason);
        String reason = length ? "max_output_tokens" : cut ? "content_filter" : null;
        if (cut && !output.isEmpty()) {
            // The item the limit cut short, as OpenAI marks it.
            output.getLast().put("status", "incomplete");
        }
        result = objects.finish(start, cut ? "incomplete" : "completed", reason, output, usage);
        events.add(lifecycle(cut ? "response.incomplete" : "response.completed", result));
        return events;
    }

    /**
     * The events that open the response ({@code response.created}, {@code response.in_progress}) unless they went
     * out already: with the first chunk, or before it, while the backend reads the prompt.
     */
    List<ObjectNode> open() {
        List<ObjectNode> events = new ArrayList<>();
        if (!started) {
            started = true;
            events.add(lifecycle("response.created", start));
            events.add(lifecycle("response.in_progress", start));
        }
        return events;
    }

    /** The event that ends a response that failed after it had begun. */
    List<ObjectNode> fail(String code, String message) {
        result = objects.fail(start, output, code, message);
        return List.of(lifecycle("response.failed", result));
    }

    boolean started() {
        return started;
    }

    /**
     * Goes on from a native stream's events, cut mid-answer and resumed as chat: its output items (a text answer's:
     * one resumed with reasoning or tool calls is not), the open one with its text so far, and its sequence numbers,
     * so that the chunks after them extend the same response.
     *
     * @param passed the output item events passed on
     * @param count  how many events were passed on in all: the next sequence number where they carried none
     */
    void resumeAfter(List<ObjectNode> passed, int count) {
        started = true;
        sequence = Math.max(sequence, count);
        for (ObjectNode event : passed) {
            sequence = Math.max(sequence, event.path("sequence_number").asInt(-1) + 1);
            switch (event.path("type").asString("")) {
                case "response.output_item.added" -> {
                    ObjectNode item = ((ObjectNode) event.get("item")).deepCopy();
                    Kind kind = switch (item.path("type").asString("")) {
                        case "message" -> Kind.MESSAGE;
                        case "function_call" -> Kind.FUNCTION_CALL;
                        default -> Kind.REASONING;
                    };
                    open = new Open(kind, item, output.size());
                    output.add(item);
                }
                case "response.output_text.delta" -> {
                    if (open != null) {
                        open.text.append(event.path("delta").asString(""));
                    }
                }
                case "response.output_item.done" -> {
                    int index = event.path("output_index").asInt(output.size() - 1);
                    if (index >= 0 && index < output.size() && event.get("item") instanceof ObjectNode item) {
                        output.set(index, item.deepCopy());
                    }
                    open = null;
                }
                default -> { }
            }
        }
    }

    /** The finished response ({@link #complete} or {@link #fail} was called). */
    ObjectNode response() {
        if (result == null) {
            throw new IllegalStateException("the response has not ended");
        }
        return result;
    }

    private void text(List<ObjectNode> events, Kind kind, String delta) {
        if (open == null || open.kind != kind) {
            close(events);
            openText(events, kind);
        }
        open.text.append(delta);
        ObjectNode event = itemEvent(kind == Kind.MESSAGE ? "response.output_text.delta" : "response.reasoning_text.delta");
        event.put("content_index", 0);
        event.put("delta", delta);
        if (kind == Kind.MESSAGE) {
            event.putArray("logprobs");
        }
        events.add(event);
    }

    private void openText(List<ObjectNode> events, Kind kind) {
        ObjectNode item = json.createObjectNode();
        if (kind == Kind.MESSAGE) {
            item.put("id", ResponseIds.message());
            item.put("type", "message");
            item.put("status", "in_progress");
            item.putArray("content");
            item.put("role", "assistant");
        } else {
            item.put("id", ResponseIds.reasoning());
            item.put("type", "reasoning");
            item.putArray("summary");
            item.putArray("content");
            item.put("status", "in_progress");
        }
        open = new Open(kind, item, output.size());
        output.add(item);
        events.add(itemAdded(item));
        ObjectNode part = itemEvent("response.content_part.added");
        part.put("content_index", 0);
        part.set("part", part(kind, ""));
        events.add(part);
    }

    private void toolCall(List<ObjectNode> events, ToolCall call) {
        int index = call.index() == null ? 0 : call.index();
        Open item = calls.get(index);
        if (item == null) {
            close(events);
            ObjectNode node = json.createObjectNode();
            node.put("id", ResponseIds.functionCall());
            node.put("type", "function_call");
            node.put("status", "in_progress");
            node.put("arguments", "");
            node.put("call_id", call.id() != null && !call.id().isEmpty() ? call.id() : ResponseIds.call());
            node.put("name", call.function() != null && call.function().name() != null ? call.function().name() : "");
            item = new Open(Kind.FUNCTION_CALL, node, output.size());
            calls.put(index, item);
            open = item;
            output.add(node);
            events.add(itemAdded(node));
        } else if (item != open) {
            // Chat streams do not interleave calls: a call that was closed gets nothing more.
            return;
        }
        String arguments = call.function() == null ? null : call.function().arguments();
        if (arguments != null && !arguments.isEmpty()) {
            item.text.append(arguments);
            ObjectNode event = itemEvent("response.function_call_arguments.delta");
            event.put("delta", arguments);
            events.add(event);
        }
    }

    /** Ends the open item with its done events. */
    private void close(List<ObjectNode> events) {
        if (open == null) {
            return;
        }
        Open item = open;
        String text = item.text.toString();
        switch (item.kind) {
            case MESSAGE, REASONING -> {
                boolean message = item.kind == Kind.MESSAGE;
                ObjectNode done = itemEvent(message ? "response.output_text.done" : "response.reasoning_text.done");
                done.put("content_index", 0);
                done.put("text", text);
                if (message) {
                    done.putArray("logprobs");
                }
                events.add(done);
                ObjectNode partDone = itemEvent("response.content_part.done");
                partDone.put("content_index", 0);
                partDone.set("part", part(item.kind, text));
                events.add(partDone);
                item.item.withArray("content").add(part(item.kind, text));
            }
            case FUNCTION_CALL -> {
                ObjectNode done = itemEvent("response.function_call_arguments.done");
                done.put("arguments", text);
                done.put("name", item.item.get("name").stringValue());
                events.add(done);
                item.item.put("arguments", text);
            }
        }
        item.item.put("status", "completed");
        ObjectNode itemDone = event("response.output_item.done");
        itemDone.put("output_index", item.index);
        itemDone.set("item", item.item.deepCopy());
        events.add(itemDone);
        open = null;
    }

    private ObjectNode part(Kind kind, String text) {
        ObjectNode part = json.createObjectNode();
        if (kind == Kind.MESSAGE) {
            part.put("type", "output_text");
            part.putArray("annotations");
            part.putArray("logprobs");
            part.put("text", text);
        } else {
            part.put("type", "reasoning_text");
            part.put("text", text);
        }
        return part;
    }

    private ObjectNode itemAdded(ObjectNode item) {
        ObjectNode event = event("response.output_item.added");
        event.put("output_index", output.size() - 1);
        event.set("item", item.deepCopy());
        return event;
    }

    /** An event about the open item. */
    private ObjectNode itemEvent(String type) {
        ObjectNode event = event(type);
        event.put("item_id", open.item.get("id").stringValue());
        event.put("output_index", open.index);
        return event;
    }

    private ObjectNode lifecycle(String type, ObjectNode response) {
        ObjectNode event = event(type);
        event.set("response", response.deepCopy());
        return event;
    }

    private ObjectNode event(String type) {
        ObjectNode event = json.createObjectNode();
        event.put("type", type);
        event.put("sequence_number", sequence++);
        return event;
    }
}
