package dev.lazarus.gateway.resilience;

import dev.lazarus.backend.api.openai.Usage;

/**
 * Times one backend call as a stream: time to the first generated token, the gap before each
 * later one, and the generation speed once it is over. Plain fields, one per call, updated from
 * the call's own signals (which Reactor delivers one at a time): nothing is allocated per chunk.
 */
public final class GenerationClock {

    private final long start = System.nanoTime();
    private long firstToken = -1;
    private long lastToken = -1;
    private int generatedChunks;
    private Usage usage;
    private boolean whole;

    /**
     * Takes one chunk into account.
     *
     * @return nanoseconds since the previous generated token, or -1 when this chunk is the first
     *         generated one or generates nothing (a piece of several tokens that came together: the
     *         gap before its first; the others came with it)
     */
    public <T> long onChunk(T chunk, ChunkInspector<T> inspector) {
        Usage u = inspector.usage(chunk);
        if (u != null) {
            usage = u;
        }
        if (inspector.whole()) {
            return onWhole(chunk, inspector);
        }
        int tokens = inspector.tokens(chunk);
        if (tokens == 0) {
            return -1;
        }
        long now = System.nanoTime();
        generatedChunks += tokens;
        long gap = lastToken < 0 ? -1 : now - lastToken;
        if (firstToken < 0) {
            firstToken = now;
        }
        lastToken = now;
        return gap;
    }

    /**
     * A whole answer: all its tokens came at once. Its first token is placed where the server's own
     * generation time says it was; without one, the time to the first token stays unknown.
     */
    private <T> long onWhole(T answer, ChunkInspector<T> inspector) {
        whole = true;
        long now = System.nanoTime();
        long generation = inspector.generationNanos(answer);
        lastToken = now;
        if (generation >= 0 && inspector.generated(answer)) {
            firstToken = Math.max(start, now - generation);
        }
        return -1;
    }

    /** Whether the call answered whole (a non-streamed answer), so that its first token was not seen. */
    public boolean answeredWhole() {
        return whole;
    }

    public boolean started() {
        return firstToken >= 0;
    }

    /** Time to the first generated token, or -1 before it. */
    public long ttftNanos() {
        return firstToken < 0 ? -1 : firstToken - start;
    }

    public long elapsedNanos() {
        return System.nanoTime() - start;
    }

    /** Completion tokens: as the backend reported them, else one per generated chunk. */
    public int completionTokens() {
        return usage != null ? usage.completionTokens() : generatedChunks;
    }

    /** Prompt tokens as the backend reported them, or -1 when it did not (yet). */
    public int promptTokens() {
        return usage != null ? usage.promptTokens() : -1;
    }

    /**
     * Generation speed between the first and the last token (prompt processing excluded), or NaN
     * when fewer than two tokens came or they came at once.
     */
    public double tokensPerSecond() {
        int tokens = completionTokens();
        long span = lastToken - firstToken;
        if (firstToken < 0 || tokens < 2 || span <= 0) {
            return Double.NaN;
        }
        return (tokens - 1) * 1e9 / span;
    }
}
