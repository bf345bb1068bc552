package dev.lazarus.kt.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.model.KvCacheTypes;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.model.TinyModels;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.speculative.DraftLength;
import dev.lazarus.kt.speculative.Drafter;
import dev.lazarus.kt.speculative.ModelDrafter;
import dev.lazarus.kt.speculative.NgramDrafter;
import dev.lazarus.backend.api.SpeculativeDecodingView.Counts;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Speculative decoding changes how many forward passes a generation takes, never what it generates: each test runs
 * the same prompts with and without a drafter and compares the tokens, and checks that drafts were really accepted
 * (or rejected) so that the comparison covers the verification's both outcomes.
 */
class SpeculativeDecodingTest {

    @TempDir
    static Path dir;

    static GgufFile file;
    static GgufFile otherFile;
    static Model model;
    static Model other;
    static final Parallel PARALLEL = Parallel.ofThreads(2);

    /** A prompt that repeats itself: its continuation repeats it too, on a random model as on a trained one. */
    static final int[] REPETITIVE = repeat(new int[] {5, 17, 9, 33, 2, 41}, 4);

    @BeforeAll
    static void load() {
        file = GgufFile.open(TinyModels.qwen3moe(dir, 11));
        model = Model.load(file, PARALLEL);
        otherFile = GgufFile.open(TinyModels.qwen3moe(dir, 12));
        other = Model.load(otherFile, PARALLEL);
    }

    @AfterAll
    static void close() {
        file.close();
        otherFile.close();
        PARALLEL.close();
    }

    static int[] repeat(int[] unit, int times) {
        int[] out = new int[unit.length * times];
        for (int i = 0; i < out.length; i++) {
            out[i] = unit[i % unit.length];
        }
        return out;
    }

    static EngineOptions options() {
        return new EngineOptions(TinyModels.CONTEXT, 4, 8, 64, 0);
    }

    /** The tokens each prompt generates (at most {@code limit}, -1: until the context is full), and how each ended. */
    record Run(List<int[]> tokens, List<EndReason> ends, Counts stats, long steps) {}

    static Run run(Drafter drafter, int limit, int[]... prompts) throws Exception {
        return run(model, drafter, limit, prompts);
    }

    static Run run(Model target, Drafter drafter, int limit, int[]... prompts) throws Exception {
        try (InferenceEngine engine = new InferenceEngine(target, options(), PARALLEL, drafter)) {
            List<RecordingListener> listeners = new ArrayList<>();
            for (int[] p : prompts) {
                RecordingListener l = new RecordingListener(limit);
                engine.submit(p, l);
                listeners.add(l);
            }
            List<int[]> tokens = new ArrayList<>();
            List<EndReason> ends = new ArrayList<>();
            for (RecordingListener l : listeners) {
                ends.add(l.awaitEnd());
                tokens.add(l.tokenArray());
            }
            return new Run(tokens, ends, engine.speculation().orElse(null),
                    engine.steps());
        }
    }

    static void assertSameTokens(Run plain, Run speculative) {
        for (int s = 0; s < plain.tokens().size(); s++) {
            assertThat(speculative.tokens().get(s)).as("sequence %d", s).containsExactly(plain.tokens().get(s));
            assertThat(speculative.ends().get(s)).as("sequence %d", s).isEqualTo(plain.ends().get(s));
        }
    }

    @Test
    void ngramDraftsAreAcceptedAndTheGreedyOutputIsUnchanged() throws Exception {
        Run plain = run(null, -1, REPETITIVE);
        Run speculative = run(new NgramDrafter(3, 8, 0), -1, REPETITIVE);
        assertSameTokens(plain, speculative);
        assertThat(plain.ends()).containsExactly(EndReason.CONTEXT_FULL);
        assertThat(speculative.stats().acceptedTokens()).as("accepted draft tokens").isPositive();
        assertThat(speculative.stats().tokensPerStep()).isGreaterThan(1.0);
        assertThat(speculative.steps()).as("forward passes").isLessThan(plain.steps());
    }

    @Test
    void severalSequencesVerifyTheirDraftsInOnePass() throws Exception {
        int[][] prompts = {REPETITIVE, repeat(new int[] {7, 7, 30, 12}, 5), {1, 2, 3, 4, 5}, repeat(new int[] {60, 3}, 9)};
        Run plain = run(null, 30, prompts);
        Run speculative = run(new NgramDrafter(2, 6, 0), 30, prompts);
        assertSameTokens(plain, speculative);
        assertThat(speculative.stats().acceptedTokens()).isPositive();
    }

    /** The listener stops at 7 tokens: inside a run of accepted draft tokens, the rest of the run is not emitted. */
    @Test
    void aStopInsideAnAcceptedRunEndsThereAndTheContextLimitHolds() throws Exception {
        for (int limit : new int[] {7, 23}) {
            Run plain = run(null, limit, REPETITIVE);
            Run speculative = run(new NgramDrafter(3, 16, 0), limit, REPETITIVE);
            assertSameTokens(plain, speculative);
            assertThat(speculative.tokens().getFirst()).hasSize(limit);
        }
        int[] nearlyFull = repeat(new int[] {5, 17, 9, 33, 2, 41}, 9); // 54 of 64 positions
        Run plain = run(null, -1, nearlyFull);
        Run speculative = run(new NgramDrafter(3, 16, 0), -1, nearlyFull);
        assertSameTokens(plain, speculative);
        assertThat(speculative.tokens().getFirst()).hasSize(TinyModels.CONTEXT - nearlyFull.length);
    }

    @Test
    void theMainModelAsItsOwnDraftModelHasEveryDraftAccepted() throws Exception {
        int[][] prompts = {{1, 2, 3, 4, 5}, {9, 8}, REPETITIVE};
        Run plain = run(null, 25, prompts);
        Run speculative = run(new ModelDrafter(model, TinyModels.CONTEXT, KvCacheTypes.F16, new DraftLength(3, 0), null), 25, prompts);
        assertSameTokens(plain, speculative);
        assertThat(speculative.stats().draftedTokens()).isPositive();
        assertThat(speculative.stats().acceptanceRate()).isEqualTo(1.0);
    }

    @Test
    void anotherDraftModelHasDraftsRejectedAndTheOutputUnchanged() throws Exception {
        int[][] prompts = {{1, 2, 3, 4, 5}, {9, 8}, REPETITIVE};
        Run plain = run(null, 25, prompts);
        Run speculative = run(new ModelDrafter(other, TinyModels.CONTEXT, KvCacheTypes.F16, new DraftLength(4, 0), null), 25, prompts);
        assertSameTokens(plain, speculative);
        assertThat(speculative.stats().draftedTokens()).isPositive();
        assertThat(speculative.stats().acceptedTokens()).isLessThan(speculative.stats().draftedTokens());
    }

    /** A dense llama and a deepseek2 whose cache rows are latent vectors drop rejected positions the same way. */
    @Test
    void otherArchitecturesRollTheirCachesBackToo() throws Exception {
        for (Path path : List.of(TinyModels.llama(dir, 5), TinyModels.deepseek2(dir, 6, true))) {
            try (GgufFile gguf = GgufFile.open(path)) {
                Model m = Model.load(gguf, PARALLEL);
                int[][] prompts = {REPETITIVE, {3, 1, 4, 1, 5, 9, 2, 6}};
                Run plain = run(m, null, -1, prompts);
                Run speculative = run(m, new NgramDrafter(2, 8, 0), -1, prompts);
                assertSameTokens(plain, speculative);
                assertThat(speculative.stats().draftedTokens()).as("%s drafts", path.getFileName()).isPositive();
                assertThat(speculative.stats().acceptedTokens()).as("%s accepted", path.getFileName()).isPositive();
            }
        }
    }

    /** Drafts shorter than the minimum are not verified: with a minimum above the n-gram's most, nothing is. */
    @Test
    void draftsBelowTheMinimumAreNotVerified() throws Exception {
        Run speculative = run(new NgramDrafter(3, 4, 5), -1, REPETITIVE);
        assertThat(speculative.stats().draftedTokens()).isZero();
        assertThat(speculative.stats().tokensPerStep()).isEqualTo(1.0);
    }

    @Test
    void ngramLookupFollowsLlamaServersNgramSimple() {
        NgramDrafter drafter = new NgramDrafter(2, 3, 0);
        // the pattern (8, 2), the last token before the chosen one and the chosen one, occurs nowhere earlier
        int[] none = {1, 2, 3, 4, 5, 6, 7, 8, 2};
        assertThat(drafter.propose(none, none.length, 10)).isEmpty();
        // the pattern (3, 4) occurs at 2 and at 7: the latest one's continuation is the draft, at most m tokens of it
        int[] tokens = {9, 9, 3, 4, 10, 11, 12, 3, 4, 13, 14, 3, 4};
        assertThat(drafter.propose(tokens, tokens.length, 10)).containsExactly(13, 14, 3);
        assertThat(drafter.propose(tokens, tokens.length, 2)).containsExactly(13, 14);
        // a history no longer than n + m + 1 drafts nothing
        assertThat(drafter.propose(tokens, 6, 10)).isEmpty();
    }
}
