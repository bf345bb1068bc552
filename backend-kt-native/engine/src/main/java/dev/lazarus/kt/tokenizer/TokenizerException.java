package dev.lazarus.kt.tokenizer;

/** A vocabulary in the GGUF metadata that cannot be used: missing keys, wrong types, unknown kinds. */
public class TokenizerException extends RuntimeException {

    public TokenizerException(String message) {
        super(message);
    }
}
