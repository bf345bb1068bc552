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
 * The engine continues prompts exactly like llama-server: on generated tiny {@code llama}, {@code qwen3moe}
 * and {@code deepseek2} models in F32, F16, Q8_0 and Q4_K_M, the greedy 64-token continuations of every
 * {@link ParityPrompts prompt} are the same token ids, and the log-probabilities llama-server reports for its
 * top-5 candidates at every step (up to and including a divergence, if any) are within a tolerance of the
 * engine's.
 *
 * <p>Why token ids can be compared exactly: both sides compute the same operations with the same roundings
 * where roundings are coarse (F16 KV cache and attention probabilities, activations quantized to Q8_0/Q8_K
 * for quantized weights, F16 activations for F16 weights); what differs is only the order of f32 sums (SIMD
 * lanes, threads, tiles), which moves logits by a few ulps of their magnitude. The generated models are
 * random but not near-tied (sharp output head), so such noise never flips an argmax over 64 steps.
 *
 * <p>Tolerances on |Δ logprob| (natural log) for llama-server's top-5 candidates:
 * <ul>
 *   <li>{@value #TOLERANCE} for every format. Logprobs are differences of logits (magnitude ≲ 20 here), so
 *   f32 summation-order noise is ~1e-5; the coarse roundings are the same on both sides, but a sum-order
 *   difference can move a value across a rounding boundary of an F16 cache entry or of a Q8 activation
 *   block (one step of 2^-11 relative, or of 1/127 of the block's maximum), which shifts a logit by a few
 *   1e-4 at most. The margin to {@value #TOLERANCE} covers that without hiding a real bug: a wrong eps,
 *   scale, rounding point or RoPE angle moves logprobs by 0.05 to several units.</li>
 * </ul>
 */
@Tag("llama-server")
class GreedyParityTest {

    static final int TOKENS = 64;
    static final int TOP = 5;
    static final double TOLERANCE = 0.02;

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
                compare(prompt, ours, reference.continuation(), failures, summary);
            }
        }
        System.out.printf("%s %s:%n  %s%n", arch.arch(), format, String.join("\n  ", summary));
        assertThat(failures).as("%s %s against llama-server", arch.arch(), format).isEmpty();
    }

    private static void compare(Prompt prompt, Continuation ours, Continuation theirs, List<String> failures,
                                List<String> summary) {
        int divergence = ours.firstDivergence(theirs);
        if (divergence >= 0) {
            failures.add("%s: first divergence at token %d: engine %d, llama-server %d; top-%d engine %s, llama-server %s"
                    .formatted(prompt, divergence, ours.tokens()[divergence], theirs.tokens()[divergence], TOP,
                            Continuation.describe(ours.top().get(divergence)),
                            Continuation.describe(theirs.top().get(divergence))));
        }
        int steps = divergence < 0 ? TOKENS : divergence + 1;
        double worst = 0;
        boolean outOfTolerance = false;
        int compared = 0;
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
                                    Continuation.describe(theirs.top().get(step))));
                }
            }
        }
        summary.add("%-12s %s, max |Δ logprob| %.2e over %d steps".formatted(prompt,
                divergence < 0 ? "identical" : "diverges at " + divergence, worst, compared));
    }
}
