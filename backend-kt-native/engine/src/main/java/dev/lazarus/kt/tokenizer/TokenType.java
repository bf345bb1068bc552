package dev.lazarus.kt.tokenizer;

/** {@code tokenizer.ggml.token_type} values, as llama.cpp numbers them. */
public enum TokenType {
    UNDEFINED, NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE;

    static TokenType fromId(long id) {
        return id >= 0 && id < values().length ? values()[(int) id] : UNDEFINED;
    }

    /** Control and unknown tokens: matched in text and rendered only when specials are asked for. */
    public boolean isSpecial() {
        return this == CONTROL || this == UNKNOWN;
    }
}
