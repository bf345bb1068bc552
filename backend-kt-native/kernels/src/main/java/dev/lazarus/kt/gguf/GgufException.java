package dev.lazarus.kt.gguf;

/** A GGUF file that cannot be read or written; the message names the file and the key, tensor or type at fault. */
public class GgufException extends RuntimeException {

    public GgufException(String message) {
        super(message);
    }

    public GgufException(String message, Throwable cause) {
        super(message, cause);
    }
}
