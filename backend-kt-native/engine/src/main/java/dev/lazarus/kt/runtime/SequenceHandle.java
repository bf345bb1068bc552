package dev.lazarus.kt.runtime;

/** A submitted sequence; cancelling frees its slot and cache at the next step. */
public interface SequenceHandle {

    void cancel();

    boolean isDone();

    /** Prompt tokens whose keys and values came from the prefix cache instead of being computed. */
    int reusedPromptTokens();
}
