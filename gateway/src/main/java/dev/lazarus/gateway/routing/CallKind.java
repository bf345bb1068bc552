package dev.lazarus.gateway.routing;

/**
 * What one backend call returns, and so how its pieces are read, metered and continued after a
 * failure: chosen by an exhaustive {@code switch} wherever that differs.
 */
public enum CallKind {
    /** A streamed chat answer as typed chunks, one per event. */
    CHAT,
    /** A streamed chat answer as its server's events, in the pieces they came in. */
    CHAT_EVENTS,
    /**
     * A streamed answer of another protocol (Messages, Responses) as its server's events ({@link ProtocolPiece.Events}),
     * passed through from a backend that serves it natively: never resumed (a cut ends the stream with an error).
     */
    PROTOCOL_EVENTS,
    /** A streamed legacy completion as typed chunks. */
    COMPLETION,
    /** One answer in one piece ({@link dev.lazarus.backend.api.WholeAnswer}): never resumed, made again elsewhere. */
    WHOLE,
    /** One JSON document ({@link dev.lazarus.backend.api.JsonEndpoint}: embeddings, rerank, tokenize): as {@link #WHOLE}. */
    JSON
}
