package dev.lazarus.gateway.config;

import dev.lazarus.backend.api.BackendConfigException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.util.PlaceholderResolutionException;

/**
 * Turns a configuration mistake (an unknown backend kind or id, a bad backend setting, a key nothing reads, an
 * unset variable) into Spring Boot's short "APPLICATION FAILED TO START" report instead of a page of bean errors.
 */
public final class ConfigFailureAnalyzer implements FailureAnalyzer {

    @Override
    public FailureAnalysis analyze(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof BackendConfigException e) {
                return new FailureAnalysis(e.getMessage(),
                        "Fix lazarus.backends (id '" + e.backendId() + "', " + e.setting() + ") in your configuration,"
                                + " or put the module of that backend kind on the class path. See docs/configuration.md.",
                        e);
            }
            if (t instanceof GatewayConfigException e) {
                return new FailureAnalysis(e.getMessage(),
                        "Fix the lazarus.* configuration. See docs/configuration.md.", e);
            }
            if (t instanceof PlaceholderResolutionException e) {
                return new FailureAnalysis(e.getMessage().lines().findFirst().orElse(""),
                        "Set the variable, or give the placeholder a default (${NAME:default}).", e);
            }
        }
        return null;
    }
}
