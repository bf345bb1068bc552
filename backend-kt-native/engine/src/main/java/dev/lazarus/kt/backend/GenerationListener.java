package dev.lazarus.kt.backend;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.PrefillProgress;
import dev.lazarus.kt.runtime.EndReason;
import dev.lazarus.kt.runtime.SequenceListener;
import dev.lazarus.kt.sampling.Generation;
import dev.lazarus.kt.sampling.Sampler;
import dev.lazarus.kt.sampling.SamplingParams;
import dev.lazarus.kt.sampling.TokenSampler;
import dev.lazarus.kt.sampling.TokenLogprobs;
import dev.lazarus.kt.tokenizer.Tokenizer;
import java.util.List;
import java.util.function.IntPredicate;

/**
 * One request's side of a sequence: the {@link Sampler} (or a test's script) picks each token, the {@link Generation}
 * turns it into text and decides when and why the completion ends, and the results go to the
 * endpoint's {@link GenerationEvents} with the log-probabilities of the tokens each piece of
 * text came from.
 */
final class GenerationListener implements SequenceListener {

    private final Tokenizer tokenizer;
    private final TokenSampler sampler;
    private final Generation generation;
    private final PendingLogprobs logprobs;
    private final GenerationEvents events;
    /** Told of each prefill step before the first token; null where the caller does not ask. */
    private final PrefillProgress progress;
    private TokenLogprobs lastLogprobs;
    private int reusedPromptTokens;

    /**
     * @param shownControlTokens control tokens written as text (a chat format's markers; see {@link Generation})
     * @param progress           told of each prefill step before the first token, or null
     */
    GenerationListener(Tokenizer tokenizer, TokenSampler sampler, SamplingParams params, int[] prompt,
                       IntPredicate shownControlTokens, GenerationEvents events, PrefillProgress progress) {
        this.tokenizer = tokenizer;
        this.sampler = sampler;
        for (int token : prompt) {
            sampler.accept(token); // as llama-server does: the penalties look back into the prompt
        }
        this.generation = new Generation(tokenizer, params, prompt.length, shownControlTokens);
        this.logprobs = params.logprobs() ? new PendingLogprobs() : null;
        this.events = events;
        this.progress = progress;
    }

    @Override
    public void prefilled(int processed, int total) {
        if (progress != null) {
            progress.progressed(processed, total);
        }
    }

    @Override
    public void admitted(int reusedPromptTokens) {
        this.reusedPromptTokens = reusedPromptTokens;
    }

    @Override
    public int select(float[] logits) {
        Sampler.Sampled sampled = sampler.next(logits);
        sampler.accept(sampled.token());
        lastLogprobs = sampled.logprobs();
        return sampled.token();
    }

    @Override
    public boolean accept(int token) {
        // End-of-generation tokens are counted in usage but are not part of the text, nor of logprobs.
        if (logprobs != null && !tokenizer.isEog(token)) {
            logprobs.add(lastLogprobs, tokenizer.tokenBytes(token, false).length);
        }
        emit(generation.accept(token), false);
        return !generation.finished();
    }

    @Override
    public int tokensLeft() {
        return generation.remaining();
    }

    @Override
    public void ended(EndReason reason) {
        switch (reason) {
            case CANCELLED -> { } // the client is gone: nobody to tell
            case CONTEXT_FULL -> finish(generation.finishForLength());
            case STOPPED -> finish("");
        }
    }

    @Override
    public void failed(Throwable error) {
        events.error(error instanceof BackendException be ? be
                : new BackendException(BackendErrorKind.INTERNAL, "kt-native engine failed: " + error, error));
    }

    private void finish(String rest) {
        emit(rest, true);
        events.finish(generation.finishReason(), generation.stopSequence(), generation.usage(), reusedPromptTokens);
    }

    private void emit(String text, boolean last) {
        List<PendingLogprobs.Scored> scored = null;
        if (logprobs != null) {
            scored = logprobs.sent(text);
            if (last) {
                scored.addAll(logprobs.finish());
            }
        }
        if (!text.isEmpty() || (scored != null && !scored.isEmpty())) {
            events.text(text, scored);
        }
    }
}
