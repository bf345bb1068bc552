package dev.lazarus.kt.fidelity;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The measurement's plumbing between a stand-in oracle and a stand-in engine over a vocabulary of 4. */
class FidelityTest {

    /** An oracle that always continues with {@code path}, reporting its token as the only candidate at logprob 0. */
    record FixedOracle(int[] path) implements Oracle {
        @Override
        public OracleContinuation greedy(int[] prompt, int tokens, int topLogprobs) {
            List<List<TokenLogprob>> top = new ArrayList<>();
            for (int id : path) {
                top.add(List.of(new TokenLogprob(id, 0)));
            }
            return new OracleContinuation(path, top, Set.of());
        }

        @Override
        public String describe() {
            return "fixed";
        }
    }

    /** An engine whose argmax at position {@code i} is {@code choices[i]}, certain of it; records its calls. */
    static final class ScriptedEngine implements EngineProbe {
        final int[] choices;
        final List<String> calls = new ArrayList<>();

        ScriptedEngine(int... choices) {
            this.choices = choices;
        }

        @Override
        public int vocabSize() {
            return 4;
        }

        @Override
        public float[][] teacherForcedLogits(int[] prompt, int[] path, Forcing forcing) {
            calls.add("forced " + forcing);
            float[][] logits = new float[path.length][4];
            for (int i = 0; i < path.length; i++) {
                java.util.Arrays.fill(logits[i], -1000f);
                logits[i][choices[i]] = 0;
            }
            return logits;
        }

        @Override
        public int freeRunningDivergence(int[] prompt, int[] path, Set<Integer> banned) {
            calls.add("free-running");
            return 2;
        }
    }

    private static final List<FidelityPrompt> ONE = List.of(new FidelityPrompt("p", new int[] {1}));

    @Test
    void stepwiseForcingReportsItsFirstDivergenceAsTheFreeRunningOne() {
        ScriptedEngine engine = new ScriptedEngine(1, 2, 0);
        FidelityReport report = Fidelity.measure(engine, new FixedOracle(new int[] {1, 3, 0}), ONE,
                FidelityOptions.defaults().withTokens(3), "m", row -> { });

        PromptFidelity row = report.prompt("p");
        assertThat(row.agreed()).isEqualTo(2);
        assertThat(row.firstDivergence()).isEqualTo(1);
        assertThat(row.freeRunningDivergence()).isEqualTo(1);
        assertThat(row.maxDelta()).as("the oracle's token, certain to it, is impossible to the engine at 1").isGreaterThan(900);
        assertThat(engine.calls).containsExactly("forced STEPWISE");
    }

    @Test
    void onePassRunsTheFreeRunOnlyWhenAsked() {
        ScriptedEngine engine = new ScriptedEngine(1, 1);
        FidelityOptions onePass = FidelityOptions.defaults().withTokens(2).withForcing(Forcing.ONE_PASS);
        List<PromptFidelity> rows = new ArrayList<>();

        FidelityReport without = Fidelity.measure(engine, new FixedOracle(new int[] {1, 1}), ONE, onePass, "m", rows::add);
        FidelityReport with = Fidelity.measure(engine, new FixedOracle(new int[] {1, 1}), ONE,
                onePass.withFreeRunning(true), "m", rows::add);

        assertThat(without.prompt("p").freeRunningDivergence()).isEqualTo(PromptFidelity.NOT_MEASURED);
        assertThat(with.prompt("p").freeRunningDivergence()).isEqualTo(2);
        assertThat(engine.calls).containsExactly("forced ONE_PASS", "forced ONE_PASS", "free-running");
        assertThat(rows).hasSize(2);
    }

    @Test
    void aShortOracleAnswerIsAnErrorNotAPerfectScore() {
        assertThatThrownBy(() -> Fidelity.measure(new ScriptedEngine(1), new FixedOracle(new int[] {1}), ONE,
                FidelityOptions.defaults().withTokens(8), "m", row -> { }))
                .hasMessageContaining("the oracle returned 1 of 8 tokens: is its context (-c) at least 9?");
    }

    @Test
    void anIdOutsideTheEnginesVocabularyMeansAnotherModel() {
        assertThatThrownBy(() -> Fidelity.measure(new ScriptedEngine(1), new FixedOracle(new int[] {7}), ONE,
                FidelityOptions.defaults().withTokens(1), "m", row -> { }))
                .hasMessageContaining("token 7, outside the engine's vocabulary of 4: does it serve the same GGUF?");
    }
}
