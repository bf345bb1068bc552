package dev.lazarus.gateway.policy.gate;

import java.util.List;
import java.util.Locale;

/**
 * The verdict and the reasons for it, each naming the figure and the threshold.
 *
 * @param verdict GO, HOLD or NO-GO
 * @param reasons why; for GO the criteria met, otherwise the ones missed
 */
public record GateDecision(Verdict verdict, List<String> reasons) {

    public GateDecision {
        reasons = List.copyOf(reasons);
    }

    /** Decides from the figures of the candidate and (if it had one) the oracle of the same job; pure. */
    public static GateDecision decide(BackendFigures candidate, BackendFigures oracle, boolean withinMemory,
            GateThresholds t) {
        double tps = candidate.successRate() > 0 ? candidate.tokensPerSecond().mean() : 0;
        double oracleTps = oracle == null || oracle.successRate() == 0 ? Double.NaN : oracle.tokensPerSecond().mean();
        double ratio = Double.isNaN(oracleTps) || oracleTps <= 0 ? Double.NaN : tps / oracleTps;
        boolean relativeGo = !Double.isNaN(ratio) && ratio >= t.goOracleRatio();
        boolean speedGo = tps > t.goTokensPerSecond() || relativeGo;
        double ttftMs = candidate.ttftMillis().mean();
        boolean ttftOk = !Double.isNaN(ttftMs) && ttftMs < t.maxTtft().toMillis();
        double success = candidate.successRate();

        String speed = f("%.1f tok/s", tps) + (Double.isNaN(ratio) ? "" : f(" (%.2fx the oracle's %.1f)", ratio, oracleTps));
        if (success < t.minSuccessRate()) {
            return new GateDecision(Verdict.NO_GO, List.of(f("success rate %.0f%% is under %.0f%%", 100 * success,
                    100 * t.minSuccessRate())));
        }
        if (!withinMemory) {
            return new GateDecision(Verdict.NO_GO, List.of("the model does not fit the memory budget"));
        }
        if (speedGo && ttftOk && success > t.minSuccessRate()) {
            return new GateDecision(Verdict.GO, List.of(
                    speed + f(" beats %.1f tok/s or %.2fx the oracle", t.goTokensPerSecond(), t.goOracleRatio()),
                    f("TTFT %.0f ms under %d ms", ttftMs, t.maxTtft().toMillis()),
                    f("success rate %.0f%% over %.0f%%", 100 * success, 100 * t.minSuccessRate())));
        }
        if (tps < t.holdTokensPerSecond() && !relativeGo) {
            return new GateDecision(Verdict.NO_GO, List.of(speed + f(" is under %.1f tok/s", t.holdTokensPerSecond())));
        }
        List<String> missed = new java.util.ArrayList<>();
        if (!speedGo) {
            missed.add(speed + f(" is between %.1f and %.1f tok/s and under %.2fx the oracle",
                    t.holdTokensPerSecond(), t.goTokensPerSecond(), t.goOracleRatio()));
        }
        if (!ttftOk) {
            missed.add(f("TTFT %.0f ms is not under %d ms", ttftMs, t.maxTtft().toMillis()));
        }
        if (success <= t.minSuccessRate()) {
            missed.add(f("success rate %.0f%% is not over %.0f%%", 100 * success, 100 * t.minSuccessRate()));
        }
        return new GateDecision(Verdict.HOLD, missed);
    }

    private static String f(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }
}
