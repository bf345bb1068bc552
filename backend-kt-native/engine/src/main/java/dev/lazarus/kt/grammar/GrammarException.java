package dev.lazarus.kt.grammar;

/** A grammar or JSON schema llama-server would refuse; the message says why, for the client's 400. */
public final class GrammarException extends RuntimeException {

    public GrammarException(String message) {
        super(message);
    }
}
