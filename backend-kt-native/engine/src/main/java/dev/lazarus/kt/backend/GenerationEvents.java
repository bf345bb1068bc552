package dev.lazarus.kt.backend;

import dev.lazarus.backend.api.openai.Usage;
import dev.lazarus.kt.sampling.FinishReason;
import java.util.List;

/**
 * What one generation produces, written in the wire shape of its endpoint (chat chunks or legacy
 * completions). Called from engine threads, one call at a time.
 */
interface GenerationEvents {

    /**
     * New text (whole UTF-8 characters, stop strings withheld) and the log-probabilities of the
     * tokens it completes; {@code logprobs} is null when the request did not ask for them.
     */
    void text(String delta, List<PendingLogprobs.Scored> logprobs);

    /**
     * The end.
     *
     * @param stopSequence       the request's stop string that ended the answer, or null
     * @param reusedPromptTokens prompt tokens served from the prefix cache instead of computed
     */
    void finish(FinishReason reason, String stopSequence, Usage usage, int reusedPromptTokens);

    void error(Throwable error);
}
