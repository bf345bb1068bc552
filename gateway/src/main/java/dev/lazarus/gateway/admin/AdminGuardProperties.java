package dev.lazarus.gateway.admin;

import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * How the admin token is guarded against guessing, under {@code lazarus.admin.guard.*}.
 *
 * @param minTokenLength          the gateway refuses to start with a shorter admin token
 * @param failuresBeforeBackoff   failed logins from one address before it must wait; each further failure
 *                                doubles the wait, from {@code backoff} up to {@code maxBackoff}
 * @param backoff                 the first wait
 * @param maxBackoff              the longest wait
 * @param globalFailuresPerMinute failed logins from all addresses in a minute past which every admin request
 *                                waits for the minute to end (a guess spread over many addresses); 0: no limit
 * @param trustedProxies          addresses of reverse proxies whose {@code X-Forwarded-For} names the client;
 *                                from any other peer the header is ignored
 */
@Validated
@ConfigurationProperties(prefix = "lazarus.admin.guard")
public record AdminGuardProperties(
        @DefaultValue("12") @Min(1) int minTokenLength,
        @DefaultValue("5") @Min(1) int failuresBeforeBackoff,
        @DefaultValue("1s") @NotNull Duration backoff,
        @DefaultValue("5m") @NotNull Duration maxBackoff,
        @DefaultValue("600") @Min(0) int globalFailuresPerMinute,
        @DefaultValue({}) @NotNull List<String> trustedProxies) {}
