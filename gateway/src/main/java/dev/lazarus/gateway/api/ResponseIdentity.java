package dev.lazarus.gateway.api;

import java.time.Instant;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The identity the gateway gives one response, whatever backend serves it: its own id, creation
 * time (the first server's where it wrote one as OpenAI does: {@link ResponseWriter}), and a model
 * name (the one asked for, or the one that answered).
 */
public record ResponseIdentity(String id, long created, String model) {

    public ResponseIdentity withModel(String other) {
        return other.equals(model) ? this : new ResponseIdentity(id, created, other);
    }

    public ResponseIdentity withCreated(long other) {
        return other == created ? this : new ResponseIdentity(id, other, model);
    }

    private static final char[] ALPHABET =
            "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".toCharArray();
    private static final int RANDOM_CHARS = 29;

    public static ResponseIdentity chat(String model) {
        return create("chatcmpl-", model);
    }

    public static ResponseIdentity completion(String model) {
        return create("cmpl-", model);
    }

    private static ResponseIdentity create(String prefix, String model) {
        // Unique, not secret: a thread-local random is enough and never blocks on entropy.
        ThreadLocalRandom random = ThreadLocalRandom.current();
        StringBuilder id = new StringBuilder(prefix.length() + RANDOM_CHARS).append(prefix);
        for (int i = 0; i < RANDOM_CHARS; i++) {
            id.append(ALPHABET[random.nextInt(ALPHABET.length)]);
        }
        return new ResponseIdentity(id.toString(), Instant.now().getEpochSecond(), model);
    }
}
