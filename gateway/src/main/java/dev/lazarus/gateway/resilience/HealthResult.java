package dev.lazarus.gateway.resilience;

import dev.lazarus.backend.api.BackendHealth;
import java.time.Duration;
import java.time.Instant;

/**
 * The last active check of one backend.
 *
 * @param health    what the backend's cheap check said (a check that failed or hung is DOWN)
 * @param checkedAt when the answer came
 * @param took      how long the check took
 */
public record HealthResult(BackendHealth health, Instant checkedAt, Duration took) {

    public boolean isUp() {
        return health.isUp();
    }
}
