package dev.lazarus.kt.sampling;

/** Why a completion ended, as the OpenAI API names it. */
public enum FinishReason {
    /** An end-of-generation token or a stop string. */
    STOP("stop"),
    /** {@code max_tokens} reached. */
    LENGTH("length");

    private final String wireName;

    FinishReason(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }
}
