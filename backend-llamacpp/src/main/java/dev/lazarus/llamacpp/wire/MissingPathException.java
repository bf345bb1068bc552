package dev.lazarus.llamacpp.wire;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;

/**
 * An upstream's 404, 405 or 501: classified as any such answer is, its status kept, because on a path the backend
 * only hopes the server has (a protocol in {@code auto} mode) it says that the server lacks the path.
 */
public final class MissingPathException extends BackendException {

    private final int status;

    MissingPathException(int status, BackendException classified) {
        super(classified.kind(), classified.getMessage(), classified.param(), classified.retryAfter(),
                classified.upstreamType(), classified.upstreamCode(), classified.getCause());
        this.status = status;
    }

    static boolean missing(int status) {
        return status == 404 || status == 405 || status == 501;
    }

    /** The HTTP status the upstream answered. */
    public int status() {
        return status;
    }

    /** Whether the answer named an unknown model rather than an unknown path. */
    public boolean unknownModel() {
        return "model_not_found".equals(upstreamCode());
    }
}
