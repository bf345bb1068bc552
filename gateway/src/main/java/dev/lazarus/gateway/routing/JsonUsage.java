package dev.lazarus.gateway.routing;

import dev.lazarus.backend.api.openai.Usage;
import java.util.Map;

/** The usage of a JSON answer (embeddings, rerank: {@code prompt_tokens}, {@code total_tokens}); null when it has none. */
public final class JsonUsage {

    private JsonUsage() {}

    public static Usage of(Map<String, Object> answer) {
        if (!(answer.get("usage") instanceof Map<?, ?> usage) || !(usage.get("prompt_tokens") instanceof Integer prompt)) {
            return null;
        }
        return Usage.of(prompt, usage.get("completion_tokens") instanceof Integer completion ? completion : 0);
    }
}
