package dev.lazarus.gateway.resilience;

import dev.lazarus.backend.api.BackendException;

/**
 * A backend failure after some of its answer was relayed, with what was relayed. Same kind,
 * message and parameters as the backend's own failure (which is its cause), so every other part
 * of the gateway treats it exactly as that failure; only the resumer looks at the transcript.
 */
public final class InterruptedStreamException extends BackendException {

    private final transient Transcript transcript;

    InterruptedStreamException(BackendException failure, Transcript transcript) {
        super(failure.kind(), failure.getMessage(), failure.param(), failure.retryAfter(),
                failure.upstreamType(), failure.upstreamCode(), failure);
        this.transcript = transcript;
    }

    public Transcript transcript() {
        return transcript;
    }
}
