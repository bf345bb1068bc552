package dev.lazarus.gateway.policy.gate;

import java.time.Duration;

/**
 * The verdict thresholds; see {@code lazarus.policy.gate.*}.
 *
 * @param speed          generation speed, against the oracle or absolute
 * @param maxTtft        GO needs the average time to first token under this
 * @param minSuccessRate GO needs a success rate over this; under it is NO-GO
 * @param agreement      agreement with the oracle on its greedy path
 */
public record GateThresholds(SpeedThresholds speed, Duration maxTtft, double minSuccessRate,
                             AgreementThresholds agreement) {

    /** The runbook defaults. */
    public static GateThresholds defaults() {
        return new GateThresholds(SpeedThresholds.defaults(), Duration.ofSeconds(2), 0.95,
                AgreementThresholds.defaults());
    }

    /**
     * Speed. When the job measured an oracle, the ratios decide (and the floor, if set); the
     * absolute thresholds decide only when it could not, because the runbooks' "12 tok/s" was
     * written against an oracle at 10.9 tok/s and means nothing next to a faster one.
     *
     * @param goOracleRatio       GO needs at least this times the oracle's speed ...
     * @param holdOracleRatio     ... under this times the oracle is NO-GO; between the two, HOLD
     * @param floorTokensPerSecond with an oracle, GO also needs at least this (0: no floor); under it, HOLD
     * @param goTokensPerSecond   without an oracle: GO needs more than this ...
     * @param holdTokensPerSecond ... under this is NO-GO; between the two, HOLD
     */
    public record SpeedThresholds(double goOracleRatio, double holdOracleRatio, double floorTokensPerSecond,
                                  double goTokensPerSecond, double holdTokensPerSecond) {

        /** 1.1x and 0.75x (the runbooks' 12 and 8 tok/s against their oracle's 10.9), no floor, 12 and 8 tok/s. */
        public static SpeedThresholds defaults() {
            return new SpeedThresholds(1.1, 0.75, 0, 12, 8);
        }
    }

    /**
     * Agreement with the oracle.
     *
     * @param floor                  top-1 agreement under this is NO-GO
     * @param maxMeanLogprobDelta    mean |Δ logprob| over the oracle's top-5 above this is NO-GO
     * @param required               a candidate whose agreement could not be measured is HOLD, not GO
     */
    public record AgreementThresholds(double floor, double maxMeanLogprobDelta, boolean required) {

        public static AgreementThresholds defaults() {
            return new AgreementThresholds(0.9, 0.5, false);
        }
    }
}
