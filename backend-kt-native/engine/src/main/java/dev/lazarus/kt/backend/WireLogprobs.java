package dev.lazarus.kt.backend;

import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.Logprobs;
import dev.lazarus.kt.sampling.TokenLogprobs;
import dev.lazarus.kt.tokenizer.Tokenizer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Log-probabilities in OpenAI's two wire shapes. A token is shown as its text (control tokens by
 * name, so an alternative such as {@code <|im_end|>} is recognisable) with its raw bytes, which may
 * be part of a UTF-8 character; OpenAI gives the bytes for exactly that case.
 */
final class WireLogprobs {

    private final Tokenizer tokenizer;

    WireLogprobs(Tokenizer tokenizer) {
        this.tokenizer = tokenizer;
    }

    /** Chat {@code logprobs.content[]}. */
    Logprobs chat(List<PendingLogprobs.Scored> scored) {
        List<Logprobs.TokenLogprob> content = new ArrayList<>(scored.size());
        for (PendingLogprobs.Scored s : scored) {
            TokenLogprobs lp = s.logprobs();
            List<Logprobs.TopLogprob> top = new ArrayList<>(lp.top().size());
            for (TokenLogprobs.Alternative alt : lp.top()) {
                top.add(new Logprobs.TopLogprob(text(alt.token()), alt.logprob(), bytes(alt.token())));
            }
            content.add(new Logprobs.TokenLogprob(text(lp.token()), lp.logprob(), bytes(lp.token()), top));
        }
        return new Logprobs(content);
    }

    /** Legacy completions' parallel arrays; {@code offsetBase} shifts text offsets (the echoed prompt). */
    Completion.LegacyLogprobs legacy(List<PendingLogprobs.Scored> scored, int offsetBase) {
        List<String> tokens = new ArrayList<>(scored.size());
        List<Double> tokenLogprobs = new ArrayList<>(scored.size());
        List<Map<String, Double>> top = new ArrayList<>(scored.size());
        List<Integer> offsets = new ArrayList<>(scored.size());
        for (PendingLogprobs.Scored s : scored) {
            TokenLogprobs lp = s.logprobs();
            tokens.add(text(lp.token()));
            tokenLogprobs.add((double) lp.logprob());
            Map<String, Double> alternatives = new LinkedHashMap<>();
            for (TokenLogprobs.Alternative alt : lp.top()) {
                alternatives.putIfAbsent(text(alt.token()), (double) alt.logprob());
            }
            top.add(alternatives);
            offsets.add(offsetBase + s.textOffset());
        }
        return new Completion.LegacyLogprobs(tokens, tokenLogprobs, top, offsets);
    }

    private String text(int token) {
        return new String(tokenizer.tokenBytes(token, true), StandardCharsets.UTF_8);
    }

    private List<Integer> bytes(int token) {
        byte[] raw = tokenizer.tokenBytes(token, true);
        List<Integer> out = new ArrayList<>(raw.length);
        for (byte b : raw) {
            out.add(b & 0xFF);
        }
        return out;
    }
}
