package dev.lazarus.kt.correctness;

import dev.lazarus.kt.chat.ChatTemplate;
import dev.lazarus.kt.correctness.Continuation.Candidate;
import dev.lazarus.kt.correctness.ParityModels.Format;
import dev.lazarus.kt.correctness.ParityPrompts.Prompt;
import dev.lazarus.kt.tensor.Parallel;
import dev.lazarus.kt.testsupport.LlamaCpp;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine continues prompts like llama-server: on generated tiny {@code llama}, {@code qwen3moe} and
 * {@code deepseek2} models in F32, F16, Q8_0 and Q4_K_M, greedy 64-token continuations of every
 * {@link ParityPrompts prompt} are compared token id by token id, and the log-probabilities llama-server reports
 * for its top-5 candidates ({@code n_probs}, raw softmax) are compared with the engine's.
 *
 * <p>Why identity can be asked for. Quantized activations (F16 for F16 weights, Q8_0/Q8_K for quantized ones)
 * turn any last-bit difference in an f32 sum into a whole rounding step once a value lands near a rounding
 * boundary, and the difference then cascades; so the engine reproduces the arithmetic of llama-server's CPU
 * backend (Debian's build, zen4 variant, {@code -fa off}) bit for bit: ggml's AVX-512 {@code expf} polynomial in
 * softmax and SiLU, the lane structure and horizontal-sum order of every vec_dot it uses (F32, F16, Q8_0, the
 * legacy 32-value types, Q5_K, Q6_K, in-place Q4_K), the repacked Q4_K GEMV and four-row GEMM, the fused
 * multiply-adds GCC makes of the rope rotation, the YaRN angle and the f32 dot tail, and the same order for
 * batches as for single tokens (that build has no llamafile tinyBLAS). Logprobs then agree to ~1e-6.
 *
 * <p>That arithmetic includes which kernel llama-server picks for a product, which depends on the batch: the
 * repacked Q4_K GEMM for groups of four activation rows; the tiled K-quant matmul ({@code TiledKQuantKernel})
 * for Q5_K, Q6_K and unrepacked Q4_K weights once a product has 8 or more rows (per expert for routed
 * experts); and only the rows whose logits are wanted in the last block's FFN ({@code inp_out_ids}). A last-bit
 * difference in any of them stays invisible in most logprobs (the next Q8_K quantization usually absorbs it) but
 * shows up as 0.05-0.1 logprob steps or a split continuation on some prompts, as deepseek2 at Q4_K_M did.
 *
 * <p>Held per format ({@link Expectation}), all 9 prompts, all 64 tokens identical on every architecture, no
 * exception. Logprob tolerances: 1e-4 for F32 and Q8_0 (measured ≤ 4.6e-6: the remaining noise is
 * llama-server's float softmax and JSON rounding against the engine's double log-softmax); 0.005 for F16
 * (≤ 3e-6 on 25 of 27 runs, but 7.4e-4 / 3.9e-4 on llama's "digits" / "chat" and 3.3e-5 on qwen3moe's "chat":
 * a last-bit difference not located yet that moves no token); 0.25 for Q4_K_M (≤ 3e-6 on 26 of 27 runs, but
 * 0.10 on llama's "chat": a value that differs from llama-server's at prompt position 34 in the first block's
 * attention, see below).
 *
 * <p>Locating such a difference: llama-server's {@code /embeddings} with {@code --embeddings --pooling none}
 * returns every prompt token's final hidden state at full precision, so it can be compared bit for bit with the
 * engine's; re-quantizing the model with {@code llama-quantize --tensor-type NAME=q8_0} (whose activation scale
 * is rounded to f16, hiding last-bit differences) then bisects the tensor whose product differs. That is how the
 * tiled matmul (Q5_K attn_output, Q6_K experts) and the Q6_K vec_dot lane order were found; for llama's "chat"
 * at Q4_K_M it points at {@code blk.0.attn_v} (Q4_K, repacked): the hidden states are identical up to position
 * 33 and differ from position 34 on.
 */
@Tag("llama-server")
class GreedyParityTest {

    static final int TOKENS = 64;
    static final int TOP = 5;

    /** The |Δ logprob| tolerance per format; all {@link #TOKENS} tokens must be identical in every format. */
    record Expectation(double tolerance) {
        static Expectation of(Format format) {
            return switch (format) {
                case F32, Q8_0 -> new Expectation(1e-4);
                case F16 -> new Expectation(0.005);
                case Q4_K_M -> new Expectation(0.25);
            };
        }
    }

    @TempDir
    static Path dir;

    static Parallel parallel;

    @BeforeAll
    static void needsLlamaCpp() {
        LlamaCpp.require();
        parallel = Parallel.ofThreads(2);
    }

    @AfterAll
    static void closePool() {
        if (parallel != null) {
            parallel.close();
        }
    }

    /** Every architecture in every format; {@code -Dparity.only=<regex>} (e.g. {@code "LLAMA Q8_0"}) narrows it when debugging. */
    static Stream<Arguments> models() {
        return Arrays.stream(ParityModels.values())
                .flatMap(arch -> Arrays.stream(Format.values()).map(format -> Arguments.of(arch, format)))
                .filter(a -> (a.get()[0] + " " + a.get()[1]).matches(System.getProperty("parity.only", ".*")));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("models")
    void greedyContinuationsMatchLlamaServer(ParityModels arch, Format format) {
        Path model = arch.write(format, dir);
        List<String> failures = new ArrayList<>();
        List<String> summary = new ArrayList<>();
        try (EngineRunner engine = new EngineRunner(model, parallel); LlamaReference llama = LlamaReference.start(model)) {
            ChatTemplate template = ChatTemplate.fromMetadata(engine.file().metadata(), engine.tokenizer());
            for (Prompt prompt : ParityPrompts.all(template)) {
                int[] ids = engine.tokenizer().encode(prompt.text(), true, true);
                LlamaReference.Result reference = llama.greedy(ids, TOKENS, TOP);
                assertThat(reference.banned()).as("end-of-generation tokens").isEqualTo(engine.endOfGeneration());
                assertThat(reference.continuation().tokens()).as("llama-server's continuation").hasSize(TOKENS);
                Continuation ours = engine.greedy(ids, TOKENS, reference.banned(), TOP);
                compare(prompt, ours, reference.continuation(), Expectation.of(format), failures, summary);
            }
        }
        System.out.printf("%s %s:%n  %s%n", arch.arch(), format, String.join("\n  ", summary));
        assertThat(failures).as("%s %s against llama-server", arch.arch(), format).isEmpty();
    }

    private static void compare(Prompt prompt, Continuation ours, Continuation theirs, Expectation expect,
                                List<String> failures, List<String> summary) {
        int divergence = ours.firstDivergence(theirs);
        int steps = divergence < 0 ? TOKENS : divergence + 1;
        if (divergence >= 0) {
            failures.add("%s: first divergence at token %d (tolerance %s): engine %d, llama-server %d; top-%d engine %s, llama-server %s"
                    .formatted(prompt, divergence, expect.tolerance(), ours.tokens()[divergence],
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
                if (delta > expect.tolerance() && !outOfTolerance) {
                    outOfTolerance = true; // the first step out of tolerance says it; later steps only add noise
                    failures.add("%s: step %d token %d: engine logprob %.5f, llama-server %.5f (|Δ| %.5f > %s); top-%d engine %s, llama-server %s"
                            .formatted(prompt, step, c.id(), ours.distributions()[step][c.id()], c.logprob(), delta,
                                    expect.tolerance(), TOP, Continuation.describe(ours.top().get(step)),
                                    Continuation.describe(reported)));
                }
            }
        }
        summary.add("%-12s %s; max |Δ logprob| %.2e over the %d compared steps with reported top-%d".formatted(prompt,
                divergence < 0 ? "64 tokens identical" : "first divergence at token " + divergence, worst, compared, TOP));
    }
}
