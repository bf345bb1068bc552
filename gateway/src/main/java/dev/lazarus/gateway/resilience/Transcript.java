package dev.lazarus.gateway.resilience;

import dev.lazarus.backend.api.GeneratedTokens;
import dev.lazarus.backend.api.TokenPrefix;
import java.util.Optional;

/**
 * What one backend call has relayed so far, kept as it streams so that a mid-stream failure can be
 * resumed: the generated text (appended from the chunks' own strings, nothing re-serialised), the
 * number of generated chunks (one token each for the backends we know), the prompt's size where the
 * backend told it, and whether any output
 * was of a kind a text prefix cannot continue (tool calls, reasoning), and the answer's token ids
 * where the backend recorded them ({@link GeneratedTokens}). Where no backend is left to go on from the text,
 * the text is not kept (a long answer's copy for nothing); the counts still end an answer cut at its limit.
 */
public final class Transcript {

    private final StringBuilder text;
    private int tokens;
    private boolean structured;
    private int promptTokens = -1;
    private final GeneratedTokens ids = new GeneratedTokens();

    /** A transcript that keeps the relayed text. */
    public Transcript() {
        this(true);
    }

    /** With {@code keepsText} false, {@link #text()} stays empty. */
    Transcript(boolean keepsText) {
        text = keepsText ? new StringBuilder(256) : null;
    }

    <T> void add(T chunk, ChunkInspector<T> inspector) {
        boolean structuredChunk = inspector.structuredOutput(chunk);
        String piece = text == null ? null : inspector.text(chunk);
        if (piece != null && !piece.isEmpty()) {
            text.append(piece);
        }
        tokens += inspector.tokens(chunk);
        structured |= structuredChunk;
        if (promptTokens < 0) {
            promptTokens = inspector.promptTokens(chunk);
        }
    }

    /** The relayed text; empty where it was not kept. */
    public String text() {
        return text == null ? "" : text.toString();
    }

    public int tokens() {
        return tokens;
    }

    /**
     * The original prompt's size in tokens as the backend counted it, when one of its chunks said so
     * (a llama-server asked for per-token timings says so on its first token), else -1.
     */
    public int promptTokens() {
        return promptTokens;
    }

    /** What the backend records of the answer's token ids (handed to it in the call's context). */
    GeneratedTokens generatedTokens() {
        return ids;
    }

    /** The answer so far as the exact token ids of its model, where the backend told them. */
    public Optional<TokenPrefix> tokenPrefix() {
        return ids.prefix();
    }

    /** Tool-call or reasoning output was relayed: the answer cannot be continued as text. */
    public boolean structured() {
        return structured;
    }
}
