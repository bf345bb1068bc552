package dev.lazarus.kt.backend;

import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.CompletionRequest;
import dev.lazarus.kt.tokenizer.Tokenizer;
import java.util.List;

/**
 * The prompt of a legacy completion request as token ids, and the text to echo before the
 * completion ("" unless {@code echo}). Refuses, naming the parameter, what this engine cannot do
 * rather than silently ignoring it.
 */
record LegacyPrompt(int[] tokens, String echo) {

    static LegacyPrompt of(CompletionRequest r, Tokenizer tokenizer) {
        if (r.suffix() != null && !r.suffix().isEmpty()) {
            throw BackendException.invalidRequest(
                    "suffix is not supported by the kt-native backend (no fill-in-the-middle)", "suffix");
        }
        boolean echo = Boolean.TRUE.equals(r.echo());
        if (echo && r.logprobs() != null) {
            throw BackendException.invalidRequest("echo together with logprobs is not supported by the kt-native"
                    + " backend: it does not compute log-probabilities of prompt tokens", "echo");
        }
        String text = r.promptText();
        int[] tokens;
        if (text != null) {
            tokens = tokenizer.encode(text, true, true);
        } else {
            tokens = tokenIds(r.prompt(), tokenizer.vocabSize());
            text = tokenizer.decode(tokens);
        }
        if (tokens.length == 0) {
            throw BackendException.invalidRequest("prompt must not be empty", "prompt");
        }
        return new LegacyPrompt(tokens, echo ? text : "");
    }

    /** A prompt given as an array of token ids; anything else (several prompts) is refused. */
    private static int[] tokenIds(Object prompt, int vocabSize) {
        if (!(prompt instanceof List<?> list) || list.isEmpty() || !list.stream().allMatch(e -> e instanceof Number)) {
            throw BackendException.invalidRequest("prompt must be a string or one array of token ids: the kt-native"
                    + " backend runs one prompt per request", "prompt");
        }
        int[] ids = new int[list.size()];
        for (int i = 0; i < ids.length; i++) {
            long id = ((Number) list.get(i)).longValue();
            if (id < 0 || id >= vocabSize) {
                throw BackendException.invalidRequest("prompt token id " + id + " is outside the vocabulary (0 to "
                        + (vocabSize - 1) + ")", "prompt");
            }
            ids[i] = (int) id;
        }
        return ids;
    }
}
