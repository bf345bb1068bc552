package dev.lazarus.kt.model;

/** A GGUF file whose metadata or tensors do not describe a model this engine can run. */
public class ModelFormatException extends RuntimeException {

    public ModelFormatException(String message) {
        super(message);
    }
}
