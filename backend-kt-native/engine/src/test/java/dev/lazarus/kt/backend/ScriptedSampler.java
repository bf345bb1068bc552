package dev.lazarus.kt.backend;

import dev.lazarus.kt.sampling.Sampler;
import dev.lazarus.kt.sampling.TokenSampler;

/**
 * Answers with a fixed text, then the end-of-turn token, whatever the model's logits say: a
 * random-weight model made to write what a trained one would (a tool call, say), while the
 * engine, the text decoding and the stream around it run for real.
 */
final class ScriptedSampler implements TokenSampler {

    private final int[] tokens;
    private int next;

    ScriptedSampler(String answer) {
        this(EmbeddedModel.TOKENIZER, answer, EmbeddedModel.TOKENIZER.tokenId("<|im_end|>").orElseThrow());
    }

    /** {@code answer} in {@code tokenizer}'s tokens, then {@code end}. */
    ScriptedSampler(dev.lazarus.kt.tokenizer.Tokenizer tokenizer, String answer, int end) {
        int[] text = tokenizer.encode(answer, false, false);
        tokens = java.util.Arrays.copyOf(text, text.length + 1);
        tokens[text.length] = end;
    }

    @Override
    public Sampler.Sampled next(float[] logits) {
        return new Sampler.Sampled(tokens[Math.min(next++, tokens.length - 1)], null);
    }

    @Override
    public void accept(int token) {
    }
}
