package dev.lazarus.kt.fidelity;

import java.util.ArrayList;
import java.util.List;

/**
 * What a model must reach to pass: a floor on the overall top-1 agreement and a ceiling on the overall max
 * |Δ logprob|. NaN leaves a bound unset.
 */
public record FidelityThresholds(double minTop1, double maxDelta) {

    public static final FidelityThresholds NONE = new FidelityThresholds(Double.NaN, Double.NaN);

    public FidelityThresholds {
        if (!Double.isNaN(minTop1) && (minTop1 < 0 || minTop1 > 1)) {
            throw new IllegalArgumentException("minimum top-1 agreement must be within [0, 1], got " + minTop1);
        }
        if (!Double.isNaN(maxDelta) && !(maxDelta >= 0)) {
            throw new IllegalArgumentException("maximum |Δ logprob| must be ≥ 0, got " + maxDelta);
        }
    }

    public boolean isEmpty() {
        return Double.isNaN(minTop1) && Double.isNaN(maxDelta);
    }

    /** Why {@code report} misses these thresholds, one sentence each; empty when it meets them. */
    public List<String> violations(FidelityReport report) {
        FidelitySummary overall = report.overall();
        List<String> out = new ArrayList<>();
        if (!Double.isNaN(minTop1) && overall.top1Agreement() < minTop1) {
            out.add("top-1 agreement %.4f (%d of %d positions) is below the minimum %s"
                    .formatted(overall.top1Agreement(), overall.agreed(), overall.positions(), minTop1));
        }
        if (!Double.isNaN(maxDelta) && overall.maxDelta() > maxDelta) {
            out.add("max |Δ logprob| %.3g is above the maximum %s".formatted(overall.maxDelta(), maxDelta));
        }
        return out;
    }
}
