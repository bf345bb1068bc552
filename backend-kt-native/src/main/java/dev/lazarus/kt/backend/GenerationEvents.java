package dev.lazarus.kt.backend;

import dev.lazarus.backend.api.openai.Logprobs;
import java.util.List;

/** What one generation produces, independent of the wire shape (chat chunks or legacy completions). */
interface GenerationEvents {

    /** New text (complete UTF-8, stop strings held back) and the log-probabilities of the tokens it came from. */
    void text(String delta, List<Logprobs.TokenLogprob> logprobs);

    /** The end: {@code stop} or {@code length}, with the token counts for usage. */
    void finish(String finishReason, int promptTokens, int completionTokens);

    void error(Throwable error);
}
