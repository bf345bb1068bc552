package dev.lazarus.gateway.resilience;

import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * {@code lazarus.health.*}: the active checks of every backend (its cheap health call, never a
 * completion).
 *
 * @param interval time between two checks of one backend
 * @param timeout  a check that has not answered by then counts as DOWN
 */
@Validated
@ConfigurationProperties(prefix = "lazarus.health")
public record HealthProperties(
        @DefaultValue("5s") @NotNull Duration interval,
        @DefaultValue("2s") @NotNull Duration timeout) {}
