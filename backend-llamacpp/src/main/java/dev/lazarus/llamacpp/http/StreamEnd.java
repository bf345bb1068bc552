package dev.lazarus.llamacpp.http;

import dev.lazarus.llamacpp.wire.SseDecoder;

/** How a stream ended: a body that stops before [DONE] or the final chunk was cut short. */
final class StreamEnd {
    private boolean done;
    /** Whether the final chunk (the usage chunk) came, after which a missing [DONE] is forgiven. */
    boolean sawFinal;

    /** Whether {@code event} comes before [DONE] (false for [DONE] itself and anything after it). */
    boolean beforeDone(SseDecoder.Event event) {
        if (done) {
            return false;
        }
        done = event.isDone();
        return !done;
    }

    boolean complete() {
        return done || sawFinal;
    }
}
