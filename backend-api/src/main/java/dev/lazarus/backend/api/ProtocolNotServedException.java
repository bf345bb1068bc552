package dev.lazarus.backend.api;

/**
 * A backend's server answered that it has no endpoint for a {@link ChatProtocol} (404, 405, 501) that the backend
 * passed through because it was left to find out ({@code auto}); the backend now translates that protocol onto its
 * chat completions. Neither the request's fault nor the backend's: its kind is one that neither fails over nor counts
 * against the backend, and the gateway sends the same request translated to the same backend at once.
 */
public final class ProtocolNotServedException extends BackendException {

    private final String backendId;
    private final ChatProtocol protocol;

    public ProtocolNotServedException(String backendId, ChatProtocol protocol, String message) {
        this(backendId, protocol, message, null);
    }

    private ProtocolNotServedException(String backendId, ChatProtocol protocol, String message, Throwable cause) {
        super(BackendErrorKind.INVALID_REQUEST, message, null, null, cause);
        this.backendId = backendId;
        this.protocol = protocol;
    }

    @Override
    public ProtocolNotServedException withMessage(String message, Throwable cause) {
        return new ProtocolNotServedException(backendId, protocol, message, cause);
    }

    /** The backend whose server lacks the endpoint. */
    public String backendId() {
        return backendId;
    }

    public ChatProtocol protocol() {
        return protocol;
    }
}
