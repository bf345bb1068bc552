package dev.lazarus.backend.api;

/** A backend's configuration is invalid; the message names the backend and the setting. */
public class BackendConfigException extends IllegalArgumentException {

    private final String backendId;
    private final String setting;

    public BackendConfigException(String backendId, String setting, String message) {
        super("backend '" + backendId + "': " + message);
        this.backendId = backendId;
        this.setting = setting;
    }

    public String backendId() {
        return backendId;
    }

    public String setting() {
        return setting;
    }
}
