package dev.lazarus.kt.fidelity;

import java.util.List;

/**
 * What a fidelity measurement found: one row per prompt and the pooled {@link #overall()} numbers. The
 * {@link #toString()} is the table a person reads; {@link ReportFormat#json} the machine form.
 *
 * @param model       the engine's model (a file name, for reports)
 * @param oracle      the oracle it was measured against
 * @param options     how it was measured (tokens per prompt, candidates compared, forcing)
 */
public record FidelityReport(String model, String oracle, FidelityOptions options, List<PromptFidelity> prompts) {

    public FidelityReport {
        prompts = List.copyOf(prompts);
    }

    public FidelitySummary overall() {
        return FidelitySummary.of(prompts);
    }

    /** The row of the prompt named {@code name}. */
    public PromptFidelity prompt(String name) {
        return prompts.stream().filter(p -> p.name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no prompt named " + name));
    }

    @Override
    public String toString() {
        return ReportFormat.table(this);
    }
}
