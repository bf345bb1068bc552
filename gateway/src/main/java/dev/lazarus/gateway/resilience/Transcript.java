package dev.lazarus.gateway.resilience;

/**
 * What one backend call has relayed so far, kept as it streams so that a mid-stream failure can be
 * resumed: the generated text (appended from the chunks' own strings, nothing re-serialised), the
 * number of generated chunks (one token each for the backends we know), and whether any output
 * was of a kind a text prefix cannot continue (tool calls, reasoning).
 */
public final class Transcript {

    private final StringBuilder text = new StringBuilder(256);
    private int tokens;
    private boolean structured;

    <T> void add(T chunk, ChunkInspector<T> inspector) {
        String piece = inspector.text(chunk);
        boolean structuredChunk = inspector.structuredOutput(chunk);
        if (piece != null && !piece.isEmpty()) {
            text.append(piece);
        }
        if ((piece != null && !piece.isEmpty()) || structuredChunk) {
            tokens++;
        }
        structured |= structuredChunk;
    }

    public String text() {
        return text.toString();
    }

    public int tokens() {
        return tokens;
    }

    /** Tool-call or reasoning output was relayed: the answer cannot be continued as text. */
    public boolean structured() {
        return structured;
    }
}
