package dev.lazarus.kt.correctness;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.chat.ChatTemplate;
import dev.lazarus.kt.correctness.Continuation.Candidate;
import dev.lazarus.kt.correctness.ParityModels.Format;
import dev.lazarus.kt.correctness.ParityPrompts.Prompt;
import dev.lazarus.kt.fidelity.Fidelity;
import dev.lazarus.kt.fidelity.FidelityOptions;
import dev.lazarus.kt.fidelity.FidelityPrompt;
import dev.lazarus.kt.fidelity.FidelityReport;
import dev.lazarus.kt.fidelity.Forcing;
import dev.lazarus.kt.fidelity.LlamaServerOracle;
import dev.lazarus.kt.fidelity.ReportFormat;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

/**
 * The engine continues prompts like llama-server: on generated tiny {@code llama}, {@code qwen3moe} and
 * {@code deepseek2} models in F32, F16, Q8_0 and Q4_K_M, greedy 64-token continuations of every
 * {@link ParityPrompts prompt} are compared token id by token id, and the log-probabilities llama-server reports
 * for its top-5 candidates ({@code n_probs}, raw softmax) are compared with the engine's.
 *
 * <p>Why identity can be asked for. Quantized activations (F16 for F16 weights and for the KV cache, Q8_0/Q8_K
 * for quantized weights) turn any last-bit difference in an f32 value into a whole rounding step once it lands
 * near a rounding boundary, and the difference then cascades; so the engine reproduces the arithmetic of
 * llama-server's CPU backend (Debian's build, zen4 variant, {@code -fa off} and {@code -fa on}) bit for bit: ggml's AVX-512
 * {@code expf} polynomial in softmax and SiLU and the C library's {@code expf}/{@code cosf}/{@code sinf}/
 * {@code powf} where ggml calls them (glibc's are not correctly rounded), the lane structure and horizontal-sum
 * order of every vec_dot it uses (F32, F16, Q8_0, the legacy 32-value types, Q5_K, Q6_K, in-place Q4_K), the
 * fused multiply-adds GCC makes of the rope rotation, the YaRN angle and the f32 dot tail, and the kernel
 * llama-server picks for each product, which depends on the batch: the repacked Q4_K GEMV, its four-row GEMM
 * for groups of four activation rows, the tiled K-quant matmul ({@code Q4KQ5KKernel.Q5_K_TILED}, {@code Q6KInt16Kernel.TILED}) for Q5_K, Q6_K and
 * unrepacked Q4_K weights once a product has 8 or more rows (per expert for routed experts), and the last
 * block's FFN only for the rows whose logits are wanted ({@code inp_out_ids}). That build has no llamafile
 * tinyBLAS.
 *
 * <p>Held: all 9 prompts, 64 identical tokens on every architecture and format, and the reported logprobs
 * within {@link #TOLERANCE} (measured ≤ 4.6e-6 on all 108 runs: the remaining noise is llama-server's float
 * softmax and JSON rounding against the engine's double log-softmax). A last-bit difference anywhere shows up
 * here as logprob steps of 1e-4 to 0.1 on some prompts long before it splits a continuation.
 *
 * <p>Locating such a difference: llama-server's {@code /embeddings} with {@code --embeddings --pooling none}
 * returns every prompt token's final hidden state at full precision, to compare bit for bit with the engine's
 * (the first differing position narrows it down); re-quantizing the model with
 * {@code llama-quantize --tensor-type NAME=q8_0} (whose f16 activation scale hides last-bit differences) then
 * bisects the tensor whose product differs. That is how the tiled matmul (deepseek2's Q5_K attn_output and Q6_K
 * experts), the Q6_K vec_dot lane order and the rope's {@code cosf}/{@code sinf} were found.
 */
@Tag("llama-server")
class GreedyParityTest extends EngineParityFixture {

    static final int TOKENS = 64;
    static final int TOP = 5;

    /** The |Δ logprob| allowed for llama-server's reported top candidates, every format. */
    static final double TOLERANCE = 1e-4;

    /** Every architecture in every format; {@code -Dparity.only=<regex>} (e.g. {@code "LLAMA Q8_0"}) narrows it when debugging. */
    static Stream<Arguments> models() {
        return Arrays.stream(ParityModels.values())
                .flatMap(arch -> arch.greedyFormats().stream().map(format -> Arguments.of(arch, format)))
                .filter(GreedyParityTest::selected);
    }

    /**
     * The cases run again with {@code -fa on}: every architecture once, in Q8_0, plus the odd-shaped llama (heads of 8:
     * no 16-lane value rows, so even prompts take flash attention's one-row order) in F32. The attention order does not
     * depend on the weight type (attention reads f32 activations and the F16 cache in every format); what changes it is
     * the head shape, grouping, sinks, window and MLA, which one format per architecture covers, at a sixth of the
     * time of running every format twice.
     */
    static Stream<Arguments> flashAttentionModels() {
        return Stream.of(Arguments.of(ParityModels.LLAMA, Format.Q8_0), Arguments.of(ParityModels.QWEN3MOE, Format.Q8_0),
                        Arguments.of(ParityModels.DEEPSEEK2, Format.Q8_0), Arguments.of(ParityModels.DEEPSEEK2_KV_B, Format.Q8_0),
                        Arguments.of(ParityModels.DEEPSEEK32, Format.Q8_0),
                        Arguments.of(ParityModels.WIDE_DEEPSEEK32, Format.Q8_0), Arguments.of(ParityModels.GLM_DSA, Format.Q8_0),
                        Arguments.of(ParityModels.WIDE_GLM_DSA, Format.Q8_0), Arguments.of(ParityModels.GLM4MOE, Format.Q8_0),
                        Arguments.of(ParityModels.GPT_OSS, Format.Q8_0), Arguments.of(ParityModels.QWEN35MOE, Format.Q8_0),
                        Arguments.of(ParityModels.QWEN3NEXT, Format.Q8_0),
                        Arguments.of(ParityModels.MINIMAX_M2, Format.Q8_0), Arguments.of(ParityModels.ODD_LLAMA, Format.F32))
                .filter(GreedyParityTest::selected);
    }

    /** Every case with {@code -fa off}, {@link #flashAttentionModels()} again with {@code -fa on}. */
    static Stream<Arguments> cases() {
        return Stream.concat(models().map(a -> Arguments.of(a.get()[0], a.get()[1], AttentionMode.OFF)),
                flashAttentionModels().map(a -> Arguments.of(a.get()[0], a.get()[1], AttentionMode.ON)));
    }

    /** Whether {@code -Dparity.only} (a regex over "ARCH FORMAT", default all) selects a case. */
    static boolean selected(Arguments a) {
        return (a.get()[0] + " " + a.get()[1]).matches(System.getProperty("parity.only", ".*"));
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("cases")
    void greedyContinuationsMatchLlamaServer(ParityModels arch, Format format, AttentionMode mode) {
        Path model = arch.write(format, dir);
        try (EngineRunner engine = new EngineRunner(model, parallel, mode.order(1))) {
            assertGreedyContract(engine, model, arch + " " + format + " " + mode, ParityContract.host(), mode);
        }
    }

    /**
     * Flash attention's split decode order: llama-server on two threads splits a single token's attention across
     * them once the cells it attends (padded to 256) reach 512, and merges the two chunks; the engine told the same
     * thread count merges alike. A prompt of about 430 tokens (one ubatch: the tiled order), then 64 decode steps
     * past 256 cells. {@code --poll 0}: llama-server's second thread sleeps instead of spinning between steps.
     */
    @Test
    void aFlashAttentionDecodeStepSplitAcrossTwoThreadsMatchesLlamaServer() {
        Path model = ParityModels.LLAMA.write(Format.Q8_0, dir);
        try (EngineRunner engine = new EngineRunner(model, parallel, AttentionMode.ON.order(2));
             LlamaReference llama = LlamaReference.start(ParityContract.host().variant(), AttentionMode.ON, model,
                     "-t", "2", "--poll", "0")) {
            String text = ParityPrompts.all(ChatTemplate.fromMetadata(engine.file().metadata(), engine.tokenizer()))
                    .getLast().text();
            int[] ids = engine.tokenizer().encode(text + " " + text, true, true);
            assertThat(ids.length).as("prompt tokens: past 256 cells, under 512 (one ubatch)").isBetween(257, 500);
            LlamaReference.Result reference = llama.greedy(ids, TOKENS, TOP);
            Continuation ours = engine.greedy(ids, TOKENS, reference.banned(), TOP);
            List<String> failures = new ArrayList<>();
            List<String> summary = new ArrayList<>();
            compare(new Prompt("long x2", text), ours, reference.continuation(), failures, summary);
            System.out.printf("LLAMA Q8_0 -fa on -t 2: %s%n", summary);
            assertThat(failures).isEmpty();
        }
    }

    /** Every prompt's greedy continuation by {@code engine} against llama-server's on {@code model}, per this host's contract. */
    static void assertGreedyContinuationsMatch(EngineRunner engine, Path model, String what) {
        assertGreedyContract(engine, model, what, ParityContract.host(), AttentionMode.OFF);
    }

    /**
     * Every prompt's greedy continuation by {@code engine} against llama-server's on {@code model}, llama-server held
     * to {@code contract}'s variant: identical tokens and logprobs within {@link #TOLERANCE} where the contract is
     * exact, else the teacher-forced agreement within its measured bounds.
     */
    static void assertGreedyContract(EngineRunner engine, Path model, String what, ParityContract contract,
                                     AttentionMode mode) {
        assertGreedyContract(engine, model, what, contract, mode, prompt -> true);
    }

    /**
     * As above for the prompts {@code which} selects, llama-server started with {@code llamaArgs} added (e.g. its
     * KV cache types).
     */
    static void assertGreedyContract(EngineRunner engine, Path model, String what, ParityContract contract,
                                     AttentionMode mode, java.util.function.Predicate<Prompt> which,
                                     String... llamaArgs) {
        List<String> failures = new ArrayList<>();
        List<String> summary = new ArrayList<>();
        String oracle;
        try (LlamaReference llama = LlamaReference.start(contract.variant(), mode, model, llamaArgs)) {
            oracle = llama.server().describe();
            ChatTemplate template = ChatTemplate.fromMetadata(engine.file().metadata(), engine.tokenizer());
            List<FidelityPrompt> forced = new ArrayList<>();
            for (Prompt prompt : ParityPrompts.all(template).stream().filter(which).toList()) {
                int[] ids = engine.tokenizer().encode(prompt.text(), true, true);
                if (!contract.exact()) {
                    forced.add(new FidelityPrompt(prompt.name(), ids));
                    continue;
                }
                LlamaReference.Result reference = llama.greedy(ids, TOKENS, TOP);
                assertThat(reference.banned()).as("end-of-generation tokens").isEqualTo(engine.endOfGeneration());
                assertThat(reference.continuation().tokens()).as("llama-server's continuation").hasSize(TOKENS);
                Continuation ours = engine.greedy(ids, TOKENS, reference.banned(), TOP);
                compare(prompt, ours, reference.continuation(), failures, summary);
            }
            if (!contract.exact()) {
                // stepwise: each oracle token as one decode step, as llama-server produced it (a one-pass forcing
                // runs the batch kernels, another summation order, and would measure that instead)
                FidelityReport report = Fidelity.measure(engine.model(), new LlamaServerOracle(llama.server().url()), forced,
                        FidelityOptions.defaults().withTokens(TOKENS).withForcing(Forcing.STEPWISE), what);
                summary.add(ReportFormat.table(report).replace("\n", "\n  "));
                failures.addAll(contract.violations(report.overall()));
            }
        }
        System.out.printf("%s (%s; contract: %s):%n  %s%n", what, oracle, contract, String.join("\n  ", summary));
        assertThat(failures).as("%s against %s, contract %s", what, oracle, contract).isEmpty();
    }

    private static void compare(Prompt prompt, Continuation ours, Continuation theirs,
                                List<String> failures, List<String> summary) {
        int divergence = ours.firstDivergence(theirs);
        int steps = divergence < 0 ? TOKENS : divergence + 1;
        if (divergence >= 0) {
            failures.add("%s: first divergence at token %d (tolerance %s): engine %d, llama-server %d; top-%d engine %s, llama-server %s"
                    .formatted(prompt, divergence, TOLERANCE, ours.tokens()[divergence],
                            theirs.tokens()[divergence], TOP, Continuation.describe(ours.top().get(divergence)),
                            Continuation.describe(theirs.top().get(divergence))));
        }
        double worst = 0;
        int compared = 0;
        boolean outOfTolerance = false;
        for (int step = 0; step < steps; step++) {
            List<Candidate> reported = theirs.top().get(step);
            if (reported == null) {
                continue;
            }
            compared++;
            for (Candidate c : reported) {
                double delta = Math.abs(ours.distributions()[step][c.id()] - c.logprob());
                worst = Math.max(worst, delta);
                if (delta > TOLERANCE && !outOfTolerance) {
                    outOfTolerance = true; // the first step out of tolerance says it; later steps only add noise
                    failures.add("%s: step %d token %d: engine logprob %.5f, llama-server %.5f (|Δ| %.5f > %s); top-%d engine %s, llama-server %s"
                            .formatted(prompt, step, c.id(), ours.distributions()[step][c.id()], c.logprob(), delta,
                                    TOLERANCE, TOP, Continuation.describe(ours.top().get(step)),
                                    Continuation.describe(reported)));
                }
            }
        }
        summary.add("%-12s %s; max |Δ logprob| %.2e over the %d compared steps with reported top-%d".formatted(prompt,
                divergence < 0 ? "64 tokens identical" : "first divergence at token " + divergence, worst, compared, TOP));
    }
}
