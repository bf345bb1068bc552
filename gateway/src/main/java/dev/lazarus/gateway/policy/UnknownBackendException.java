package dev.lazarus.gateway.policy;

/** No backend with that id is configured. The admin API answers 404 (or 400 for an id in a body). */
public final class UnknownBackendException extends RuntimeException {

    private final String backendId;

    public UnknownBackendException(String backendId) {
        super("There is no backend '" + backendId + "'.", null, false, false);
        this.backendId = backendId;
    }

    public String backendId() {
        return backendId;
    }
}
