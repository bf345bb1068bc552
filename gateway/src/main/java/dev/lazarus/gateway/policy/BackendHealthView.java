package dev.lazarus.gateway.policy;

import dev.lazarus.backend.api.BackendHealth;
import java.util.Optional;

/**
 * The last health a backend's active checks saw, as the resilience package keeps it (it
 * implements this as a bean). Without one the admin API asks the backend's own cheap check.
 */
@FunctionalInterface
public interface BackendHealthView {

    Optional<BackendHealth> lastHealth(String backendId);
}
