package dev.lazarus.gateway.policy.gate;

import dev.lazarus.gateway.policy.gate.GateThresholds.SpeedThresholds;
import java.util.Locale;

/**
 * The gate's speed rule; pure. With an oracle measured in the same job the candidate is judged
 * relative to it (a candidate slower than the oracle it would replace must never be promoted,
 * however many tok/s it makes); without one, by the absolute thresholds. The reason says which.
 */
final class SpeedRule {

    private SpeedRule() {}

    /**
     * @param tps       the candidate's average tok/s
     * @param oracleTps the oracle's in the same job, or NaN when none could be measured
     * @param noOracle  why there is none (used only when {@code oracleTps} is NaN)
     */
    static Judgement judge(double tps, double oracleTps, String noOracle, SpeedThresholds t) {
        if (Double.isNaN(oracleTps) || oracleTps <= 0) {
            return absolute(tps, noOracle, t);
        }
        double ratio = tps / oracleTps;
        String speed = f("%.1f tok/s is %.2fx the oracle's %.1f tok/s", tps, ratio, oracleTps);
        String rule = " (relative rule: the oracle was measured in this job)";
        if (ratio < t.holdOracleRatio()) {
            return new Judgement(Verdict.NO_GO, speed + f(", under the %.2fx NO-GO ratio", t.holdOracleRatio()) + rule);
        }
        if (ratio < t.goOracleRatio()) {
            return new Judgement(Verdict.HOLD, speed + f(", between the %.2fx NO-GO and the %.2fx GO ratios",
                    t.holdOracleRatio(), t.goOracleRatio()) + rule);
        }
        if (t.floorTokensPerSecond() > 0 && tps < t.floorTokensPerSecond()) {
            return new Judgement(Verdict.HOLD, speed + f(", at least the %.2fx GO ratio but under the floor of %.1f tok/s",
                    t.goOracleRatio(), t.floorTokensPerSecond()) + rule);
        }
        String floor = t.floorTokensPerSecond() > 0 ? f(" and the floor of %.1f tok/s", t.floorTokensPerSecond()) : "";
        return new Judgement(Verdict.GO, speed + f(", at least the %.2fx GO ratio", t.goOracleRatio()) + floor + rule);
    }

    private static Judgement absolute(double tps, String noOracle, SpeedThresholds t) {
        String rule = " (absolute rule: " + noOracle + ")";
        if (tps > t.goTokensPerSecond()) {
            return new Judgement(Verdict.GO, f("%.1f tok/s beats the GO threshold of %.1f tok/s", tps,
                    t.goTokensPerSecond()) + rule);
        }
        if (tps < t.holdTokensPerSecond()) {
            return new Judgement(Verdict.NO_GO, f("%.1f tok/s is under the NO-GO threshold of %.1f tok/s", tps,
                    t.holdTokensPerSecond()) + rule);
        }
        return new Judgement(Verdict.HOLD, f("%.1f tok/s is between %.1f and %.1f tok/s", tps,
                t.holdTokensPerSecond(), t.goTokensPerSecond()) + rule);
    }

    private static String f(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }
}
