package dev.lazarus.gateway.policy.gate;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The verdict and the reasons for it, each naming the figure, the threshold and (for speed) the
 * rule that applied.
 *
 * @param verdict GO, HOLD or NO-GO
 * @param reasons why; for GO the criteria met, otherwise the ones missed
 */
public record GateDecision(Verdict verdict, List<String> reasons) {

    public GateDecision {
        reasons = List.copyOf(reasons);
    }

    /**
     * Decides from the figures of the candidate, the oracle of the same job (null when its model
     * has none) and their agreement (null when not measured); pure.
     */
    public static GateDecision decide(BackendFigures candidate, BackendFigures oracle, boolean withinMemory,
            OracleAgreement agreement, GateThresholds t) {
        double success = candidate.successRate();
        double tps = success > 0 ? candidate.tokensPerSecond().mean() : 0;
        double oracleTps = oracle == null || oracle.successRate() == 0 ? Double.NaN : oracle.tokensPerSecond().mean();
        String noOracle = oracle == null ? "no oracle serves this model"
                : "the oracle '" + oracle.backendId() + "' failed every run";
        Judgement speed = SpeedRule.judge(tps, oracleTps, noOracle, t.speed());
        Judgement agrees = AgreementRule.judge(agreement, t.agreement());
        double ttftMs = candidate.ttftMillis().mean();
        boolean ttftOk = !Double.isNaN(ttftMs) && ttftMs < t.maxTtft().toMillis();

        List<String> noGo = new ArrayList<>();
        if (success < t.minSuccessRate()) {
            noGo.add(f("success rate %.0f%% is under %.0f%%", 100 * success, 100 * t.minSuccessRate()));
        }
        if (!withinMemory) {
            noGo.add("the model does not fit the memory budget");
        }
        if (agrees.verdict() == Verdict.NO_GO) {
            noGo.add(agrees.reason());
        }
        if (speed.verdict() == Verdict.NO_GO && success > 0) {
            noGo.add(speed.reason());
        }
        if (!noGo.isEmpty()) {
            return new GateDecision(Verdict.NO_GO, noGo);
        }
        boolean successOk = success > t.minSuccessRate();
        if (speed.verdict() == Verdict.GO && agrees.verdict() == Verdict.GO && ttftOk && successOk) {
            return new GateDecision(Verdict.GO, List.of(speed.reason(),
                    f("TTFT %.0f ms under %d ms", ttftMs, t.maxTtft().toMillis()),
                    f("success rate %.0f%% over %.0f%%", 100 * success, 100 * t.minSuccessRate()),
                    agrees.reason()));
        }
        List<String> missed = new ArrayList<>();
        if (speed.verdict() != Verdict.GO) {
            missed.add(speed.reason());
        }
        if (!ttftOk) {
            missed.add(f("TTFT %.0f ms is not under %d ms", ttftMs, t.maxTtft().toMillis()));
        }
        if (!successOk) {
            missed.add(f("success rate %.0f%% is not over %.0f%%", 100 * success, 100 * t.minSuccessRate()));
        }
        if (agrees.verdict() != Verdict.GO) {
            missed.add(agrees.reason());
        }
        return new GateDecision(Verdict.HOLD, missed);
    }

    private static String f(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }
}
