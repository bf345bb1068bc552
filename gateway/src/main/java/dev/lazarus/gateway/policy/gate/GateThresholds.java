package dev.lazarus.gateway.policy.gate;

import java.time.Duration;

/** The verdict thresholds; see {@code lazarus.policy.gate.*}. */
public record GateThresholds(double goTokensPerSecond, double goOracleRatio, double holdTokensPerSecond,
                             Duration maxTtft, double minSuccessRate) {

    /** The runbook defaults. */
    public static GateThresholds defaults() {
        return new GateThresholds(12, 1.1, 8, Duration.ofSeconds(2), 0.95);
    }
}
