package dev.lazarus.kt.chat;

import java.util.ArrayList;
import java.util.List;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Splits an assistant's generated text, as it streams, into plain text and the tool calls that
 * Hermes-style templates (Qwen2.5, Qwen3, the project's generated models) ask for:
 * <pre>{@code <tool_call>
 * {"name": "get_weather", "arguments": {"city": "Paris"}}
 * </tool_call>}</pre>
 * A call is given out only when its block is complete and its JSON valid, so a malformed call
 * is sent as the text the model wrote instead (the client sees what happened; never an error).
 * Text that may begin a call ({@code "<tool_c"}) is held back until it is known not to; so is
 * whitespace that may be the layout before a call. Whitespace around calls is dropped, as
 * llama-server does. Not thread-safe: one per generation.
 */
public final class ToolCallParser {

    static final String OPEN = "<tool_call>";
    static final String CLOSE = "</tool_call>";

    private static final JsonMapper JSON = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS) // arguments keep the model's digits
            .build();

    /** What the generated text turned out to be. */
    public sealed interface Piece {}

    /** Plain text, for the message content. */
    public record Text(String text) implements Piece {}

    /** A call: the function's name and its arguments as a JSON string (OpenAI's wire form). */
    public record Call(String name, String arguments) implements Piece {}

    private final int maxCalls;
    private final StringBuilder pending = new StringBuilder();
    private boolean inCall;
    private String layout = ""; // the whitespace before the open block, given back if it is no call
    private boolean afterCall;
    private int calls;

    /** @param maxCalls calls to recognise; blocks past that many stay text ({@code parallel_tool_calls: false} is 1) */
    public ToolCallParser(int maxCalls) {
        if (maxCalls < 1) {
            throw new IllegalArgumentException("maxCalls must be at least 1, got " + maxCalls);
        }
        this.maxCalls = maxCalls;
    }

    /** Takes the next piece of generated text; returns what can be decided now (possibly nothing). */
    public List<Piece> push(String text) {
        pending.append(text);
        List<Piece> out = new ArrayList<>();
        drain(out, false);
        return out;
    }

    /** The generation ended: everything still held back. An unclosed block with valid JSON is still a call. */
    public List<Piece> finish() {
        List<Piece> out = new ArrayList<>();
        drain(out, true);
        return out;
    }

    private void drain(List<Piece> out, boolean end) {
        while (true) {
            if (inCall) {
                int close = pending.indexOf(CLOSE);
                if (close < 0 && !end) {
                    return;
                }
                String body = pending.substring(0, close < 0 ? pending.length() : close);
                pending.delete(0, close < 0 ? pending.length() : close + CLOSE.length());
                inCall = false;
                Call call = parse(body);
                if (call != null) {
                    calls++;
                    afterCall = true;
                    out.add(call);
                } else {
                    text(out, layout + OPEN + body + (close < 0 ? "" : CLOSE));
                }
                continue;
            }
            int open = calls < maxCalls ? pending.indexOf(OPEN) : -1;
            if (open >= 0) {
                String before = pending.substring(0, open);
                String content = before.stripTrailing();
                text(out, content);
                layout = before.substring(content.length());
                pending.delete(0, open + OPEN.length());
                inCall = true;
                continue;
            }
            int keep = end ? 0 : heldBack();
            String ready = pending.substring(0, pending.length() - keep);
            pending.delete(0, ready.length());
            text(out, end && calls > 0 ? ready.stripTrailing() : ready);
            return;
        }
    }

    /** The tail that may still turn out to be the start of a call: whitespace, then a prefix of {@link #OPEN}. */
    private int heldBack() {
        if (calls >= maxCalls) {
            return afterCall ? trailingWhitespace(pending.length()) : 0;
        }
        int partial = 0;
        for (int n = Math.min(OPEN.length() - 1, pending.length()); n > 0; n--) {
            if (OPEN.startsWith(pending.substring(pending.length() - n))) {
                partial = n;
                break;
            }
        }
        return partial + trailingWhitespace(pending.length() - partial);
    }

    private int trailingWhitespace(int end) {
        int start = end;
        while (start > 0 && Character.isWhitespace(pending.charAt(start - 1))) {
            start--;
        }
        return end - start;
    }

    private void text(List<Piece> out, String text) {
        String t = afterCall ? text.stripLeading() : text; // the layout between and after calls
        if (!t.isEmpty()) {
            afterCall = false;
            out.add(new Text(t));
        }
    }

    /** The call a block holds, or null when it is not {@code {"name": string, "arguments": object|string}}. */
    static Call parse(String body) {
        JsonNode node;
        try {
            node = JSON.readTree(body.strip());
        } catch (JacksonException e) {
            return null;
        }
        if (node == null || !node.isObject() || !node.path("name").isString() || node.path("name").asString().isBlank()) {
            return null;
        }
        JsonNode arguments = node.path("arguments");
        String json;
        if (arguments.isMissingNode() || arguments.isNull()) {
            json = "{}";
        } else if (arguments.isObject()) {
            json = JSON.writeValueAsString(arguments);
        } else if (arguments.isString()) {
            json = arguments.asString(); // already the wire form
        } else {
            return null;
        }
        return new Call(node.path("name").asString(), json);
    }
}
