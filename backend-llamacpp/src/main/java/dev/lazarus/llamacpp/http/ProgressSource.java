package dev.lazarus.llamacpp.http;

/** Where a stream's progress reading its prompt comes from, before its first event. */
public enum ProgressSource {
    /** None: the stream is limited from its start. */
    NONE,
    /** llama-server's {@code prompt_progress} events, which the request asked for ({@code return_progress}). */
    EVENTS,
    /** llama-server's {@code GET /slots}, for an endpoint that sends no progress events ({@link SlotProgress}). */
    SLOTS
}
