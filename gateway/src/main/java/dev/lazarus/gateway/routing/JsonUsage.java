package dev.lazarus.gateway.routing;

import dev.lazarus.backend.api.openai.Usage;
import java.util.Map;

/**
 * The usage of a JSON answer (embeddings, rerank: {@code prompt_tokens}, {@code total_tokens}; a Messages or Responses
 * answer: {@code input_tokens}, {@code output_tokens}); null when it has none.
 */
public final class JsonUsage {

    private JsonUsage() {}

    public static Usage of(Map<String, Object> answer) {
        if (!(answer.get("usage") instanceof Map<?, ?> usage)) {
            return null;
        }
        if (usage.get("prompt_tokens") instanceof Integer prompt) {
            return Usage.of(prompt, usage.get("completion_tokens") instanceof Integer completion ? completion : 0);
        }
        return usage.get("input_tokens") instanceof Number ? ofInputOutput(usage) : null;
    }

    /**
     * Messages' and Responses' usage: the prompt is {@code input_tokens}, plus what Anthropic counts beside it (the
     * tokens read from and written to its cache); Responses counts its cached tokens within {@code input_tokens}.
     */
    public static Usage ofInputOutput(Map<?, ?> usage) {
        int prompt = count(usage, "input_tokens") + count(usage, "cache_read_input_tokens")
                + count(usage, "cache_creation_input_tokens");
        return Usage.of(prompt, count(usage, "output_tokens"));
    }

    private static int count(Map<?, ?> usage, String name) {
        return usage.get(name) instanceof Number n ? n.intValue() : 0;
    }
}
