package dev.lazarus.kt.sampling;

/**
 * Repetition penalties as llama.cpp applies them: over the last {@code lastN} tokens of the
 * sequence, prompt included (llama-server feeds the prompt to its sampler before the first
 * token), each token seen there {@code count} times gets its logit divided by {@code repeat}
 * (multiplied when it is negative), then lowered by {@code count × frequency + presence}.
 *
 * @param lastN     tokens looked back on; 0 turns the penalties off, -1 means the context size
 * @param repeat    llama.cpp's {@code repeat_penalty}; 1 disables
 * @param frequency OpenAI's {@code frequency_penalty}; 0 disables
 * @param presence  OpenAI's {@code presence_penalty}; 0 disables
 */
public record Penalties(int lastN, float repeat, float frequency, float presence) {

    /** llama-server's {@code repeat_last_n} default. */
    public static final int DEFAULT_LAST_N = 64;
    public static final Penalties NONE = new Penalties(DEFAULT_LAST_N, 1f, 0f, 0f);

    public Penalties {
        if (lastN < -1) {
            throw new IllegalArgumentException("lastN must be at least -1, got " + lastN);
        }
    }

    /** Whether any penalty changes a logit. */
    public boolean active() {
        return lastN != 0 && (repeat != 1f || frequency != 0f || presence != 0f);
    }

    /** How many tokens the window holds in a context of {@code contextSize} positions. */
    public int window(int contextSize) {
        return lastN < 0 ? contextSize : lastN;
    }
}
