package dev.lazarus.backend.api;

/**
 * Told by a backend while its server reads a call's prompt, before the first token: the call is alive even
 * though it has sent nothing yet. A caller that limits the wait for the first token (a long prompt on a CPU
 * takes minutes to read) measures that limit from the last progress instead of from the start. Put into a
 * call's subscriber context ({@link CallContext#withPrefillProgress}); backends that cannot tell never call
 * it. Called from the backend's threads, so it must be quick and must not block.
 */
@FunctionalInterface
public interface PrefillProgress {

    /** {@code processed} of the prompt's {@code total} tokens are read (both -1 where the server does not say). */
    void progressed(int processed, int total);
}
