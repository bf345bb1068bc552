package dev.lazarus.gateway.config;

/** The {@code lazarus.*} configuration is inconsistent; the message names the model or backend at fault. */
public class GatewayConfigException extends IllegalStateException {

    public GatewayConfigException(String message) {
        super(message);
    }
}
