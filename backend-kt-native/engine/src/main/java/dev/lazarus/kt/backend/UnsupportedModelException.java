package dev.lazarus.kt.backend;

/** The model file needs what this engine cannot do ({@link ModelNeeds#refusal()}): an architecture or tensor types. */
final class UnsupportedModelException extends RuntimeException {

    UnsupportedModelException(String reason) {
        super(reason);
    }
}
