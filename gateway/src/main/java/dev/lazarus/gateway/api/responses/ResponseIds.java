package dev.lazarus.gateway.api.responses;

import java.util.concurrent.ThreadLocalRandom;

/** Ids in OpenAI's shapes: {@code resp_}, {@code msg_}, {@code fc_}, {@code rs_}, {@code call_} and 48 hex digits. */
final class ResponseIds {

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private ResponseIds() {
    }

    static String response() {
        return next("resp_");
    }

    static String message() {
        return next("msg_");
    }

    static String functionCall() {
        return next("fc_");
    }

    static String reasoning() {
        return next("rs_");
    }

    static String call() {
        return next("call_");
    }

    private static String next(String prefix) {
        // Unique, not secret: a thread-local random never blocks on entropy.
        ThreadLocalRandom random = ThreadLocalRandom.current();
        StringBuilder id = new StringBuilder(prefix.length() + 48).append(prefix);
        for (int i = 0; i < 48; i++) {
            id.append(HEX[random.nextInt(16)]);
        }
        return id.toString();
    }
}
