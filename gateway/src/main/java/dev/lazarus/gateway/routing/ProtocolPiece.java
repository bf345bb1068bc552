package dev.lazarus.gateway.routing;

import dev.lazarus.backend.api.ProtocolEvent;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.Usage;
import java.util.List;
import java.util.Map;

/**
 * A piece of an answer to a protocol endpoint (Messages, Responses) as the router gives it: the events or the answer
 * of a backend that serves the protocol natively, or a chat chunk of one it is translated for, which the API layer
 * translates back. An answer is native or translated throughout, but for a native stream cut mid-answer: its text
 * so far is continued as chat chunks on the next backend ({@link ProtocolContinuation}), which the API layer writes
 * on as the same message.
 */
public sealed interface ProtocolPiece {

    /**
     * Events of a natively served stream, as they came together.
     *
     * @param usage      the answer's usage so far where these events carry some of it, else null
     * @param generated  how many of them add generated output (deltas)
     * @param text       the answer text their deltas add (empty if none)
     * @param structured whether they add output a text prefix cannot continue (tool calls, reasoning)
     */
    record Events(List<ProtocolEvent> events, Usage usage, int generated, String text, boolean structured)
            implements ProtocolPiece {}

    /** A natively served answer, whole, as its server gave it. */
    record Whole(Map<String, Object> answer) implements ProtocolPiece {}

    /** A chunk of the chat answer the request was translated into. */
    record Chunk(ChatCompletionChunk chunk) implements ProtocolPiece {}
}
