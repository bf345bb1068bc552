package dev.lazarus.gateway.policy.gate;

import dev.lazarus.gateway.policy.gate.GateThresholds.AgreementThresholds;
import java.util.Locale;

/**
 * The gate's agreement rule; pure. A candidate that is fast because it computes something else
 * (fewer or deferred experts, a lossy quant) is NO-GO. One that could not be scored does not
 * block GO unless {@code required} says so: then it is HOLD, for an operator to judge.
 */
final class AgreementRule {

    private AgreementRule() {}

    static Judgement judge(OracleAgreement a, AgreementThresholds t) {
        if (a == null || !a.measured()) {
            String why = a == null ? "not asked for" : a.reason();
            return t.required()
                    ? new Judgement(Verdict.HOLD, "agreement with the oracle not measured (" + why
                            + ") and lazarus.policy.gate.agreement.required is on")
                    : new Judgement(Verdict.GO, "agreement with the oracle not measured (" + why
                            + "); not required");
        }
        String figures = f("agreement with the oracle %.1f%% top-1 over %d positions", 100 * a.top1Agreement(),
                a.positions());
        String delta = a.meanAbsLogprobDelta() == null ? "no top-5 logprob compared"
                : f("mean |Δ logprob| %.3f (max %.3f)", a.meanAbsLogprobDelta(), a.maxAbsLogprobDelta());
        String diverges = a.firstDivergence() == null ? "" : f(", first divergence at position %d", a.firstDivergence());
        if (a.top1Agreement() < t.floor()) {
            return new Judgement(Verdict.NO_GO, figures + f(" is under the floor of %.1f%%", 100 * t.floor())
                    + diverges);
        }
        if (a.meanAbsLogprobDelta() != null && a.meanAbsLogprobDelta() > t.maxMeanLogprobDelta()) {
            return new Judgement(Verdict.NO_GO, figures + ", but " + delta
                    + f(" is over the limit of %.3f", t.maxMeanLogprobDelta()) + diverges);
        }
        return new Judgement(Verdict.GO, figures + f(" (floor %.1f%%), ", 100 * t.floor()) + delta
                + f(" (limit %.3f)", t.maxMeanLogprobDelta()) + diverges);
    }

    private static String f(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }
}
