package dev.lazarus.kt.fidelity;

import dev.lazarus.kt.model.Model;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The fidelity metric: how closely the engine computes what the oracle computes, on the oracle's own greedy path.
 * For each prompt the oracle generates its greedy continuation; the engine is then teacher-forced on that path
 * (see {@link Forcing}) and its log-softmax at every generated position is compared with
 * the oracle's: whether its argmax is the oracle's token (top-1 agreement, first divergence) and how far its
 * logprobs of the oracle's top candidates are from the oracle's (|Δ logprob|). Teacher forcing keeps every
 * position comparable after a first disagreement, which a free-running comparison cannot: one near-tie early
 * would make the rest of the continuation incomparable.
 *
 * <pre>{@code
 * FidelityReport report = Fidelity.measure(model, new LlamaServerOracle(URI.create("http://127.0.0.1:8080")),
 *         FidelityPrompts.builtIn(tokenizer, template), FidelityOptions.defaults(), "model.gguf");
 * assertThat(report.overall().top1Agreement()).isEqualTo(1.0);
 * }</pre>
 */
public final class Fidelity {

    private Fidelity() {
    }

    /** Measures a loaded kt-native model; {@code modelName} only labels the report. */
    public static FidelityReport measure(Model model, Oracle oracle, List<FidelityPrompt> prompts,
                                         FidelityOptions options, String modelName) {
        return measure(new ModelProbe(model), oracle, prompts, options, modelName, row -> { });
    }

    /**
     * Measures {@code engine} against {@code oracle}, prompt by prompt; {@code progress} sees each row as it is
     * done (measurements on large models take minutes).
     */
    public static FidelityReport measure(EngineProbe engine, Oracle oracle, List<FidelityPrompt> prompts,
                                         FidelityOptions options, String modelName, Consumer<PromptFidelity> progress) {
        if (prompts.isEmpty()) {
            throw new IllegalArgumentException("no prompts to measure");
        }
        List<PromptFidelity> rows = new ArrayList<>(prompts.size());
        for (FidelityPrompt prompt : prompts) {
            PromptFidelity row = measure(engine, oracle, prompt, options);
            progress.accept(row);
            rows.add(row);
        }
        return new FidelityReport(modelName, oracle.describe(), options, rows);
    }

    private static PromptFidelity measure(EngineProbe engine, Oracle oracle, FidelityPrompt prompt,
                                          FidelityOptions options) {
        int[] ids = prompt.tokens();
        OracleContinuation reference = oracle.greedy(ids, options.tokens(), options.topLogprobs());
        if (reference.tokens().length != options.tokens()) {
            // a short path would score as perfect agreement over fewer positions than asked
            throw new IllegalStateException("prompt %s: the oracle returned %d of %d tokens: is its context (-c) at least %d?"
                    .formatted(prompt.name(), reference.tokens().length, options.tokens(), ids.length + options.tokens()));
        }
        requireInVocabulary(reference, engine.vocabSize(), prompt.name());
        float[][] logits = engine.teacherForcedLogits(ids, reference.tokens(), options.forcing());
        PromptFidelity row = PromptScorer.score(prompt.name(), ids.length, reference, logits);
        if (options.forcing() == Forcing.STEPWISE) {
            // the engine's own greedy run would have taken exactly these steps up to its first different choice
            return row.withFreeRunningDivergence(row.firstDivergence());
        }
        return options.freeRunning()
                ? row.withFreeRunningDivergence(engine.freeRunningDivergence(ids, reference.tokens(), reference.banned()))
                : row;
    }

    /** An id past the engine's vocabulary means the oracle serves another model: say so, not an index error. */
    private static void requireInVocabulary(OracleContinuation reference, int vocab, String prompt) {
        for (int i = 0; i < reference.tokens().length; i++) {
            check(reference.tokens()[i], vocab, prompt);
            if (reference.top().get(i) != null) {
                reference.top().get(i).forEach(c -> check(c.id(), vocab, prompt));
            }
        }
    }

    private static void check(int id, int vocab, String prompt) {
        if (id < 0 || id >= vocab) {
            throw new IllegalStateException("prompt %s: the oracle returned token %d, outside the engine's vocabulary of %d: does it serve the same GGUF?"
                    .formatted(prompt, id, vocab));
        }
    }
}
