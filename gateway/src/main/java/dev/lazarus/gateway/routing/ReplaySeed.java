package dev.lazarus.gateway.routing;

import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A seed for a sampled Responses stream passed through natively, where the client gave none: llama-server's native
 * Responses endpoint tells no token ids, so a stream cut mid-answer can go on token-exact only by being made again
 * from its start (resilience's {@code ExactReplay}), and a sampled answer is made again only from the same seed. The
 * seed is random per request, as the server's own would be, and the same in the native request and its translation
 * onto chat. llama-server's Messages endpoint drops {@code seed}, so Messages streams get none.
 */
public final class ReplaySeed {

    private ReplaySeed() {}

    /** Whether {@code chat} samples (no zero temperature) with no seed of its own. */
    static boolean wanted(ChatCompletionRequest chat) {
        boolean sampled = chat.temperature() == null || chat.temperature() > 0;
        return sampled && !seeded(chat);
    }

    /** Whether {@code chat} carries a seed, in its field or its extras (a translated request's unknown fields). */
    public static boolean seeded(ChatCompletionRequest chat) {
        return chat.seed() != null || chat.extra().get("seed") instanceof Number;
    }

    /** A seed within llama-server's (32 bits, its "random" value left out). */
    static long draw() {
        return ThreadLocalRandom.current().nextLong(0, 0xFFFFFFFFL);
    }

    static Map<String, Object> into(Map<String, Object> body, long seed) {
        Map<String, Object> seeded = new LinkedHashMap<>(body);
        seeded.put("seed", seed);
        return seeded;
    }

    static ChatCompletionRequest into(ChatCompletionRequest chat, long seed) {
        return chat.toBuilder().seed(seed).build();
    }
}
