package dev.lazarus.backend.api;

import dev.lazarus.backend.api.openai.RawJson;
import dev.lazarus.backend.api.openai.Usage;

/**
 * A whole non-streaming answer ({@code chat.completion} or {@code text_completion}) as the backend's
 * server wrote it, for the gateway to pass on as it is but for the response's identity, and what
 * metering needs of it. Every field the server sent ({@code system_fingerprint}, usage details,
 * {@code logprobs}, {@code refusal}, llama.cpp's {@code timings}) reaches the client untouched.
 *
 * @param json            the answer's bytes and where its identity values stand
 * @param usage           the answer's usage, or null when it has none
 * @param generationNanos the time the server says it spent generating (llama.cpp's
 *                        {@code timings.predicted_ms}), or -1 when it does not say
 */
public record WholeAnswer(RawJson json, Usage usage, long generationNanos) {
}
