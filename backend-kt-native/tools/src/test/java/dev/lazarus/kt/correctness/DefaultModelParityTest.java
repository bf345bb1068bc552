package dev.lazarus.kt.correctness;

import dev.lazarus.kt.testsupport.DefaultModelFile;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The embedded default, {@code lazarus-tiny-moe} (trained weights, F16), is served alike by the engine and by
 * llama-server: every parity prompt's greedy continuation, token for token with its logprobs, per this host's
 * contract (see {@link GreedyParityTest}). The random-weight models of the other suites have no preferred tokens;
 * a trained model's are sharper, and its routers pick experts the training made matter.
 */
@Tag("llama-server")
class DefaultModelParityTest extends EngineParityFixture {

    @Test
    void embeddedDefaultModelIsServedLikeLlamaServer() {
        Path model = DefaultModelFile.path();
        try (EngineRunner engine = new EngineRunner(model, parallel)) {
            GreedyParityTest.assertGreedyContinuationsMatch(engine, model, "lazarus-tiny-moe F16 (trained)");
        }
    }

    /** The same with flash attention on both sides: llama-server's default ({@code -fa auto}) on these CPUs. */
    @Test
    void embeddedDefaultModelIsServedLikeLlamaServerWithFlashAttention() {
        Path model = DefaultModelFile.path();
        try (EngineRunner engine = new EngineRunner(model, parallel, AttentionMode.ON.order(1))) {
            GreedyParityTest.assertGreedyContract(engine, model, "lazarus-tiny-moe F16 (trained) -fa on",
                    ParityContract.host(), AttentionMode.ON);
        }
    }
}
