package dev.lazarus.kt.fidelity;

import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import java.util.List;
import java.util.Locale;

/** A {@link FidelityReport} as a table for people and as JSON for scripts. */
public final class ReportFormat {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String ROW = "%-18s %7s %9s %8s %10s %10s %10s %13s%n";

    private ReportFormat() {
    }

    public static String table(FidelityReport report) {
        StringBuilder out = new StringBuilder();
        FidelityOptions options = report.options();
        out.append("Fidelity of %s against %s: %d greedy tokens per prompt, teacher-forced %s, top-%d logprobs%n"
                .formatted(report.model(), report.oracle(), options.tokens(),
                        options.forcing().name().toLowerCase(Locale.ROOT).replace('_', '-'), options.topLogprobs()));
        out.append(ROW.formatted("prompt", "tokens", "agreed", "top-1", "max |Δ|", "mean |Δ|", "first div",
                "free-run div"));
        for (PromptFidelity p : report.prompts()) {
            out.append(ROW.formatted(clip(p.name()), p.promptTokens(), p.agreed() + "/" + p.positions(),
                    fraction(p.top1Agreement()), small(p.maxDelta()), small(p.meanDelta()),
                    divergence(p.firstDivergence()), divergence(p.freeRunningDivergence())));
        }
        FidelitySummary o = report.overall();
        out.append(ROW.formatted("overall", o.prompts() + " pr.", o.agreed() + "/" + o.positions(),
                fraction(o.top1Agreement()), small(o.maxDelta()), small(o.meanDelta()),
                divergence(o.firstDivergence()), divergence(o.freeRunningDivergence())));
        out.append("%d of %d prompts diverged (teacher-forced argmax differs from the oracle's token somewhere)%n"
                .formatted(o.divergedPrompts(), o.prompts()));
        return out.toString();
    }

    /** The report, plus the thresholds' verdict when any were given. */
    public static String json(FidelityReport report, FidelityThresholds thresholds) {
        ObjectNode root = JSON.createObjectNode();
        root.put("model", report.model()).put("oracle", report.oracle()).put("tokens", report.options().tokens())
                .put("topLogprobs", report.options().topLogprobs()).put("forcing", report.options().forcing().name());
        FidelitySummary o = report.overall();
        ObjectNode overall = root.putObject("overall");
        overall.put("prompts", o.prompts()).put("positions", o.positions()).put("agreed", o.agreed())
                .put("top1Agreement", o.top1Agreement()).put("comparedLogprobs", o.comparedLogprobs())
                .put("maxDelta", o.maxDelta()).put("meanDelta", o.meanDelta());
        putDivergence(overall, "firstDivergence", o.firstDivergence());
        overall.put("divergedPrompts", o.divergedPrompts());
        putDivergence(overall, "freeRunningDivergence", o.freeRunningDivergence());
        ArrayNode rows = root.putArray("prompts");
        for (PromptFidelity p : report.prompts()) {
            ObjectNode row = rows.addObject();
            row.put("name", p.name()).put("promptTokens", p.promptTokens()).put("positions", p.positions())
                    .put("agreed", p.agreed()).put("top1Agreement", p.top1Agreement())
                    .put("comparedLogprobs", p.comparedLogprobs()).put("maxDelta", p.maxDelta())
                    .put("meanDelta", p.meanDelta());
            putDivergence(row, "firstDivergence", p.firstDivergence());
            putDivergence(row, "freeRunningDivergence", p.freeRunningDivergence());
        }
        if (!thresholds.isEmpty()) {
            List<String> violations = thresholds.violations(report);
            ObjectNode verdict = root.putObject("thresholds");
            putBound(verdict, "minTop1", thresholds.minTop1());
            putBound(verdict, "maxDelta", thresholds.maxDelta());
            verdict.put("passed", violations.isEmpty());
            violations.forEach(verdict.putArray("violations")::add);
        }
        return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(root);
    }

    /** -1 (none) stays -1 for scripts; a divergence that was not measured is null. */
    private static void putDivergence(ObjectNode node, String field, int position) {
        if (position == PromptFidelity.NOT_MEASURED) {
            node.putNull(field);
        } else {
            node.put(field, position);
        }
    }

    private static void putBound(ObjectNode node, String field, double bound) {
        if (Double.isNaN(bound)) {
            node.putNull(field);
        } else {
            node.put(field, bound);
        }
    }

    private static String divergence(int position) {
        return switch (position) {
            case PromptFidelity.NONE -> "none";
            case PromptFidelity.NOT_MEASURED -> "not run";
            default -> Integer.toString(position);
        };
    }

    private static String fraction(double f) {
        return String.format(Locale.ROOT, "%.4f", f);
    }

    private static String small(double d) {
        return d == 0 ? "0" : String.format(Locale.ROOT, "%.2e", d);
    }

    private static String clip(String name) {
        return name.length() <= 18 ? name : name.substring(0, 17) + "…";
    }
}
