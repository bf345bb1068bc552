package dev.lazarus.kt.sampling;

import dev.lazarus.backend.api.openai.Usage;
import dev.lazarus.kt.tokenizer.IntList;
import dev.lazarus.kt.tokenizer.StreamingDecoder;
import dev.lazarus.kt.tokenizer.Tokenizer;
import java.util.function.IntPredicate;

/**
 * The text side of one completion: turns each sampled token into the text to send (complete UTF-8
 * characters, stop strings withheld), decides when the completion is over and why, and counts
 * tokens for the usage report. The engine calls {@link #accept} once per sampled token until
 * {@link #finished()}. Not thread-safe: one per sequence.
 */
public final class Generation {

    private final Tokenizer tokenizer;
    private final SamplingParams params;
    private final int promptTokens;
    private final StreamingDecoder decoder;
    private final StopMatcher stops;
    private final IntList tokens = new IntList();
    private FinishReason finishReason;

    public Generation(Tokenizer tokenizer, SamplingParams params, int promptTokens) {
        this(tokenizer, params, promptTokens, id -> false);
    }

    /**
     * @param shownControlTokens control tokens written as their text, as llama-server writes a chat format's
     *                           "preserved" tokens (gpt-oss's {@code <|channel|>}) so that its parser sees them
     */
    public Generation(Tokenizer tokenizer, SamplingParams params, int promptTokens, IntPredicate shownControlTokens) {
        this.tokenizer = tokenizer;
        this.params = params;
        this.promptTokens = promptTokens;
        this.decoder = new StreamingDecoder(tokenizer, shownControlTokens);
        this.stops = new StopMatcher(params.stop());
    }

    /**
     * Takes the next sampled token.
     *
     * @return the text to emit for it (possibly "", e.g. while a character or a possible stop string is incomplete)
     * @throws IllegalStateException when the generation has already finished
     */
    public String accept(int token) {
        if (finishReason != null) {
            throw new IllegalStateException("generation already finished: " + finishReason.wireName());
        }
        tokens.add(token);
        if (tokenizer.isEog(token)) {
            finishReason = FinishReason.STOP;
            return stops.push(decoder.flush()) + stops.flush();
        }
        String text = stops.push(decoder.push(token));
        if (stops.stopped()) {
            finishReason = FinishReason.STOP;
            return text;
        }
        if (params.maxTokens() > 0 && tokens.size() >= params.maxTokens()) {
            finishReason = FinishReason.LENGTH;
            return text + finalText();
        }
        return text;
    }

    /** Ends the generation from outside (e.g. the context is full): the held-back text, finish reason length. */
    public String finishForLength() {
        if (finishReason != null) {
            return "";
        }
        finishReason = FinishReason.LENGTH;
        return finalText();
    }

    private String finalText() {
        String rest = stops.push(decoder.flush());
        return stops.stopped() ? rest : rest + stops.flush();
    }

    /** Tokens {@code max_tokens} still lets the generation emit; unbounded without it. */
    public int remaining() {
        return params.maxTokens() > 0 ? Math.max(0, params.maxTokens() - tokens.size()) : Integer.MAX_VALUE;
    }

    public boolean finished() {
        return finishReason != null;
    }

    /** Null while generating. */
    public FinishReason finishReason() {
        return finishReason;
    }

    /** The stop string that ended the generation, or null (none did). */
    public String stopSequence() {
        return stops.matched();
    }

    /** The tokens generated so far. */
    public IntList tokens() {
        return tokens;
    }

    public Usage usage() {
        return Usage.of(promptTokens, tokens.size());
    }
}
