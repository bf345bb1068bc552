package dev.lazarus.backend.api.openai;

import java.nio.charset.StandardCharsets;

/**
 * One event of a chat stream as the gateway relays it: either the bytes its server wrote
 * ({@link #raw}, with where its identity stands) and only what the gateway reads of them, found by a
 * scan instead of a parse into a {@link ChatCompletionChunk}; or, for a chunk of a rarer shape, the
 * chunk read into types ({@link #chunk}).
 *
 * @param raw           the server's bytes, or null for a typed chunk
 * @param chunk         the typed chunk, or null for raw bytes
 * @param contentStart  where choice 0's {@code delta.content} string starts in {@code raw.bytes()} (its
 *                      opening quote), or -1 for none
 * @param contentEnd    just after its closing quote
 * @param structured    whether the delta carries tool calls or reasoning (output a text prefix cannot continue)
 * @param hasChoices    whether {@code choices} is not empty
 * @param role          whether the delta announces a role
 * @param finishReason  whether choice 0 has a {@code finish_reason}
 * @param usage         the event's usage, or null
 * @param promptTokens  the prompt's size as the server counted it on this event (llama.cpp's per-token
 *                      {@code timings}), or -1
 */
public record ChatEvent(RawJson raw, ChatCompletionChunk chunk, int contentStart, int contentEnd, boolean structured,
        boolean hasChoices, boolean role, boolean finishReason, Usage usage, int promptTokens) {

    public static ChatEvent typed(ChatCompletionChunk chunk) {
        return new ChatEvent(null, chunk, -1, -1, false, false, false, false, chunk.usage(), -1);
    }

    public boolean isRaw() {
        return raw != null;
    }

    /** Whether a raw event adds anything a client counts as a generated token. */
    public boolean generated() {
        return contentEnd - contentStart > 2 || structured;
    }

    /** The text a raw event adds to choice 0, or null for none: its content string, unescaped. */
    public String text() {
        if (contentStart < 0) {
            return null;
        }
        byte[] b = raw.bytes();
        int from = contentStart + 1;
        int to = contentEnd - 1;
        int escape = from;
        while (escape < to && b[escape] != '\\') {
            escape++;
        }
        if (escape == to) {
            return new String(b, from, to - from, StandardCharsets.UTF_8);
        }
        return JsonStrings.unescape(b, from, to);
    }
}
