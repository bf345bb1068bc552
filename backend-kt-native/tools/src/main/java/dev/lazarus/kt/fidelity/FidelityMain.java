package dev.lazarus.kt.fidelity;

import dev.lazarus.kt.chat.ChatTemplate;
import dev.lazarus.kt.fidelity.FidelityArgs.UsageException;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.host.HostCpu;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.tokenizer.Tokenizer;
import dev.lazarus.kt.tokenizer.Tokenizers;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.MissingNode;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The fidelity metric as a command (usually through {@code scripts/fidelity.sh}): loads the GGUF, measures it
 * against a llama-server serving the same file, prints the report. See {@link FidelityArgs#USAGE}.
 */
public final class FidelityMain {

    static final int MEASURED = 0;
    static final int THRESHOLD_MISSED = 1;
    static final int BAD_ARGUMENTS = 2;
    static final int FAILED = 3;

    private FidelityMain() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs the command; returns its exit code (stdout: the report; stderr: progress and errors). */
    static int run(String[] args, PrintStream out, PrintStream err) {
        FidelityArgs a;
        try {
            a = FidelityArgs.parse(args);
        } catch (UsageException e) {
            err.println("fidelity: " + e.getMessage() + " (--help for usage)");
            return BAD_ARGUMENTS;
        }
        if (a.help()) {
            out.print(FidelityArgs.USAGE);
            return MEASURED;
        }
        try (GgufFile file = GgufFile.open(a.model()); Parallel parallel = Parallel.ofThreads(a.threads())) {
            Tokenizer tokenizer = Tokenizers.fromMetadata(file.metadata());
            ChatTemplate template = a.raw() ? null : ChatTemplate.fromMetadata(file.metadata(), tokenizer);
            List<FidelityPrompt> prompts;
            try {
                prompts = a.prompts() == null ? FidelityPrompts.builtIn(tokenizer, template)
                        : FidelityPrompts.read(a.prompts(), tokenizer, template);
            } catch (IllegalArgumentException e) {
                err.println("fidelity: --prompts " + a.prompts() + ": " + e.getMessage());
                return BAD_ARGUMENTS;
            }
            LlamaServerOracle oracle = new LlamaServerOracle(a.oracle());
            oracle.requireHealthy();
            OracleSettings settings = OracleSettings.of(props(oracle), a.oracleFlashAttention(), a.oracleThreads(),
                    HostCpu.physicalCores(), a.oracleCacheK(), a.oracleCacheV());
            err.println("fidelity: the oracle: " + settings);
            // the engine computes attention in the oracle's order, its KV cache of the oracle's types
            Model model = Model.load(file, parallel, settings.order());
            try {
                model.checkCacheTypes(settings.cacheTypes(), settings.flashAttention());
            } catch (IllegalArgumentException e) {
                err.println("fidelity: not measured: the engine cannot run the oracle's KV cache (" + settings.cacheTypes()
                        + ", -fa " + (settings.flashAttention() ? "on" : "off") + "): " + e.getMessage()
                        + "; the agreement would measure the other cache rounding, not the engine");
                return FAILED;
            }
            noteOtherModel(oracle, a.model(), err);
            String name = a.model().getFileName().toString() + " (KV cache " + settings.cacheTypes() + ")";
            FidelityReport report = Fidelity.measure(new ModelProbe(model, settings.cacheTypes()), oracle, prompts, a.options(), name,
                    row -> err.printf("fidelity: %s: %d/%d agree, max |Δ| %.2e%n", row.name(), row.agreed(),
                            row.positions(), row.maxDelta()));
            report = new FidelityReport(report.model(), report.oracle() + " (" + settings + ")", report.options(),
                    report.prompts());
            out.print(a.json() ? ReportFormat.json(report, a.thresholds()) + "\n" : report.toString());
            return verdict(report, a.thresholds(), err);
        } catch (RuntimeException e) {
            err.println("fidelity: measurement failed: " + e.getMessage());
            return FAILED;
        }
    }

    private static int verdict(FidelityReport report, FidelityThresholds thresholds, PrintStream err) {
        if (thresholds.isEmpty()) {
            return MEASURED;
        }
        List<String> violations = thresholds.violations(report);
        if (violations.isEmpty()) {
            err.println("fidelity: PASS");
            return MEASURED;
        }
        violations.forEach(v -> err.println("fidelity: FAIL: " + v));
        return THRESHOLD_MISSED;
    }

    /** {@code /props}, or a missing node where the server has none (another server, an older build). */
    private static JsonNode props(LlamaServerOracle oracle) {
        try {
            return oracle.props();
        } catch (RuntimeException e) {
            return MissingNode.getInstance();
        }
    }

    /** A different file name is worth a warning, not a refusal: the same GGUF may live at another path there. */
    private static void noteOtherModel(LlamaServerOracle oracle, Path model, PrintStream err) {
        Optional<String> served;
        try {
            served = oracle.modelPath();
        } catch (RuntimeException e) {
            return; // /props is optional; the measurement itself tells whether the models match
        }
        served.map(p -> Path.of(p).getFileName().toString())
                .filter(n -> !n.equals(model.getFileName().toString()))
                .ifPresent(n -> err.println("fidelity: note: the oracle serves " + n + ", not "
                        + model.getFileName() + ": a different model measures as low agreement"));
    }
}
