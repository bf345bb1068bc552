package dev.lazarus.kt.backend;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.Logprobs;
import dev.lazarus.kt.runtime.EndReason;
import dev.lazarus.kt.runtime.SequenceListener;
import dev.lazarus.kt.tokenizer.StreamingDecoder;
import dev.lazarus.kt.tokenizer.Tokenizer;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns one sequence's tokens into text events: decodes them as a stream (whole UTF-8 characters),
 * holds back possible stop strings, ends on an end-of-generation token, a stop string or the token
 * limit, and reports the finish reason and usage.
 */
final class Generation implements SequenceListener {

    private final Tokenizer tokenizer;
    private final TokenSelector selector;
    private final StreamingDecoder decoder;
    private final StopStrings stops;
    private final int maxTokens;
    private final int promptTokens;
    private final GenerationEvents events;
    private final List<Logprobs.TokenLogprob> pendingLogprobs = new ArrayList<>();
    private int generated;
    private String finishReason;

    Generation(Tokenizer tokenizer, TokenSelector selector, List<String> stop, int maxTokens, int promptTokens,
               GenerationEvents events) {
        this.tokenizer = tokenizer;
        this.selector = selector;
        this.decoder = new StreamingDecoder(tokenizer);
        this.stops = new StopStrings(stop);
        this.maxTokens = maxTokens;
        this.promptTokens = promptTokens;
        this.events = events;
    }

    @Override
    public int select(float[] logits) {
        TokenSelector.Choice choice = selector.select(logits);
        if (choice.logprob() != null) {
            pendingLogprobs.add(choice.logprob());
        }
        return choice.token();
    }

    @Override
    public boolean accept(int token) {
        generated++;
        if (tokenizer.isEog(token)) {
            finishReason = "stop";
            return false;
        }
        emit(stops.push(decoder.push(token)));
        if (stops.stopped()) {
            finishReason = "stop";
            return false;
        }
        if (generated >= maxTokens) {
            finishReason = "length";
            return false;
        }
        return true;
    }

    @Override
    public void ended(EndReason reason) {
        if (reason == EndReason.CANCELLED) {
            return;
        }
        if (!stops.stopped()) {
            emit(stops.push(decoder.flush()) + stops.flush());
        }
        if (!pendingLogprobs.isEmpty()) {
            events.text("", drainLogprobs());
        }
        String finish = reason == EndReason.CONTEXT_FULL ? "length" : finishReason;
        events.finish(finish, promptTokens, generated);
    }

    @Override
    public void failed(Throwable error) {
        events.error(error instanceof BackendException be ? be
                : new BackendException(BackendErrorKind.INTERNAL, "kt-native engine failed: " + error, error));
    }

    private void emit(String text) {
        if (!text.isEmpty()) {
            events.text(text, drainLogprobs());
        }
    }

    private List<Logprobs.TokenLogprob> drainLogprobs() {
        if (pendingLogprobs.isEmpty()) {
            return null;
        }
        List<Logprobs.TokenLogprob> out = List.copyOf(pendingLogprobs);
        pendingLogprobs.clear();
        return out;
    }
}
